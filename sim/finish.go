package sim

import (
	"math"
	"time"

	"github.com/longfair/longfair/ledger"
)

// finish closes the replay at its end (the last event, or the horizon) and
// builds the result.
func (r *replay) finish() *Result {
	end := r.lastT
	if h := r.w.Horizon; h > 0 {
		end = h
		// Tasks ending exactly at the horizon did finish.
		for r.events.len() > 0 && r.events.top().at == h {
			if e := r.events.pop(); e.kind == evEnd {
				r.advanceTo(h)
				r.now = h
				r.complete(e)
				r.nEvents++
			}
		}
		// Tasks still running were counted in usage as if they ran to the
		// end; take off what lies beyond the horizon.
		for _, e := range r.events.items {
			if e.kind == evEnd {
				job := &r.w.Jobs[e.job]
				r.accts[job.Account].usage.AddScaled(job.Demand, -float64(e.count)*e.at.Sub(h).Seconds())
			}
		}
	}
	if !r.begun {
		r.start = end
	}
	r.advanceTo(end)
	if n := len(r.sampler.times); n == 0 || r.sampler.times[n-1] != end {
		r.sampler.take(r, end)
	}

	res := &Result{
		Policy:      r.cfg.Settings.Policy,
		Settings:    r.cfg.Settings,
		Window:      r.cfg.Window,
		Workload:    r.w.Name,
		Resources:   r.w.Resources,
		Units:       r.w.Units,
		Start:       r.start,
		End:         end,
		Makespan:    end.Sub(r.start),
		Samples:     Samples{Times: r.sampler.times, Beta: r.sampler.beta},
		Slots:       r.slots.results,
		Completions: r.completions,
		jobAccount:  make([]int, len(r.w.Jobs)),
		Events:      r.nEvents,
		Passes:      r.nPasses,
		Placements:  r.nPlacements,
	}
	if res.Window.Kind == "" {
		res.Window.Kind = ledger.WindowNone
	}
	for j := range r.w.Jobs {
		res.jobAccount[j] = r.w.Jobs[j].Account
	}
	res.Unschedulable = r.unsched
	res.Utilization = make([]float64, len(r.w.Resources))
	span := res.Makespan.Seconds()
	for x := range res.Utilization {
		if span > 0 && r.capacity[x] > 0 {
			res.Utilization[x] = r.used[x] / (r.capacity[x] * span)
		}
	}
	var waits, slowdowns float64
	for a := range r.accts {
		res.CompletedJobs += r.accts[a].jobs
		waits += r.accts[a].waitSum
		slowdowns += r.accts[a].slowdownSum
	}
	if n := float64(res.CompletedJobs); n > 0 {
		res.MeanWait, res.MeanBoundedSlowdown = seconds(waits/n), slowdowns/n
	}
	res.MaxWait = r.maxWait
	unfinishedJobs := make([]int, len(r.w.Accounts))
	for j := range r.jobs {
		js := &r.jobs[j]
		if js.unschedulable {
			continue
		}
		res.UnfinishedTasks += r.w.Jobs[j].Tasks - js.finished
		if !js.hasArrived {
			res.NeverSubmitted++
		}
		if js.root == j && js.hasArrived && js.stagesLeft > 0 {
			unfinishedJobs[r.w.Jobs[j].Account]++
		}
	}
	res.Accounts = r.accountResults(res, unfinishedJobs)
	r.finishWeighting(res) // weighting_replay.go: discrimination, FAWKES intervals
	return res
}

func (r *replay) accountResults(res *Result, unfinished []int) []AccountResult {
	totalWeight := 0.0
	for _, a := range r.w.Accounts {
		totalWeight += a.Weight
	}
	aggregate := make([]float64, len(r.w.Accounts))
	allAggregate := 0.0
	for a := range r.accts {
		for x, u := range r.accts[a].usage {
			if r.capacity[x] > 0 {
				aggregate[a] += u / r.capacity[x]
			}
		}
		allAggregate += aggregate[a]
	}
	out := make([]AccountResult, len(r.w.Accounts))
	for a, acct := range r.w.Accounts {
		st := &r.accts[a]
		f := r.book.Account(acct.Name, res.End)
		ar := AccountResult{
			Name:          acct.Name,
			Weight:        acct.Weight,
			Usage:         st.usage,
			FinalUsage:    f.Usage,
			FinalBaseline: f.Baseline,
			FinalBeta:     ledger.Beta(f.Usage, f.Baseline),
			TasksRun:      st.tasksRun,
			Jobs:          st.jobs,
			Unfinished:    unfinished[a],
		}
		switch {
		case totalWeight > 0:
			ar.ContributionShare = acct.Weight / totalWeight
		default:
			ar.ContributionShare = 1 / float64(len(r.w.Accounts))
		}
		if allAggregate > 0 {
			ar.UsageShare = aggregate[a] / allAggregate
		}
		// Skip the first tenth of the account's own time in the run: an
		// account that arrives to a busy cluster waits under any policy.
		ar.MinBeta = ar.FinalBeta
		warm := res.End
		if st.arrived {
			warm = st.firstArrival.Add(res.End.Sub(st.firstArrival) / 10)
		}
		for k, t := range res.Samples.Times {
			if t >= warm {
				ar.MinBeta = math.Min(ar.MinBeta, res.Samples.Beta[a][k])
			}
		}
		if st.jobs > 0 {
			n := float64(st.jobs)
			ar.MeanWait = seconds(st.waitSum / n)
			ar.MeanCompletion = seconds(st.completionSum / n)
			ar.MeanSlowdown = st.slowdownSum / n
		}
		out[a] = ar
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
