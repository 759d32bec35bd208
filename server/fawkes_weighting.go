package server

import (
	"math"
	"slices"
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/fawkes"
)

// fawkesWeighting is the leader's FAWKES weighting (as the simulator runs
// it, sched/sim/fawkes_replay.go): it samples every account from the
// FSM, time-averages the samples over each interval T with a fawkes.Meter,
// and at the end of each interval computes new weights and resizes the
// partitions when the global discrimination exceeds τ. Between intervals
// an account that gains work is given a partition at once, with the mean
// weight of the others, and one that runs out of work gives its partition
// back. It keeps no clock: every step is handed the FSM's input at a time.
// Its state is the leader's only: a new leader starts afresh from the
// committed partitions.
type fawkesWeighting struct {
	cfg     fawkes.Config // defaults filled in
	names   []string
	meter   *fawkes.Meter
	active  []bool
	weights []float64
	// shares are the partitions as this weighting last decided them.
	shares []float64
	// jobs are the jobs not yet seen ending: how many of their tasks had
	// ended when last sampled, their account, and the step that saw them
	// last (steps counts the steps).
	jobs  map[uint64]*seenJob
	steps uint64
	// fresh is set until the first step, which makes sure the accounts
	// with work have partitions.
	fresh bool
}

type seenJob struct {
	done    int64
	account int
	seen    uint64
}

// fawkesDecision is what one step concluded.
type fawkesDecision struct {
	// Shares, when not nil, are new partitions to commit, in the order of
	// the input's accounts.
	Shares []float64
	// Tick is set when the step ended an interval, with its outcome.
	Tick *fawkes.Decision
}

// slowdownReference is the shortest time a job's slowdown is measured
// against, as in the simulator: a job of a few seconds does not get an
// enormous slowdown from a short wait.
const slowdownReference = 10 * time.Second

// newFawkesWeighting starts the weighting at the input's time, from the
// partitions committed there: an account's share is its weight.
func newFawkesWeighting(in *fsm.FawkesInput) *fawkesWeighting {
	n := len(in.Accounts)
	w := &fawkesWeighting{
		cfg: in.Config.WithDefaults(), names: accountNames(in), meter: fawkes.NewMeter(in.Config, n, in.Now),
		active: make([]bool, n), weights: make([]float64, n), shares: make([]float64, n),
		jobs: make(map[uint64]*seenJob), fresh: true,
	}
	for i := range in.Accounts {
		a := &in.Accounts[i]
		w.active[i] = hasWork(a)
		if w.active[i] {
			w.weights[i] = a.Share
		}
		w.shares[i] = a.Share
		for _, j := range a.Jobs {
			w.jobs[j.ID] = &seenJob{done: j.Done, account: i}
		}
	}
	// An account with work but no partition yet starts with the mean
	// weight of the others, as one that gains work later does.
	mean := fawkes.MeanActiveWeight(w.weights, w.active)
	for i, on := range w.active {
		if on && w.weights[i] <= 0 {
			w.weights[i] = mean
		}
	}
	return w
}

// fits reports whether the weighting was started for the input's accounts
// and configuration; when not, the caller starts a new one.
func (w *fawkesWeighting) fits(in *fsm.FawkesInput) bool {
	return w.cfg == in.Config.WithDefaults() && slices.Equal(w.names, accountNames(in))
}

func accountNames(in *fsm.FawkesInput) []string {
	names := make([]string, len(in.Accounts))
	for i := range in.Accounts {
		names[i] = in.Accounts[i].Name
	}
	return names
}

// step samples the input. ended says how a job that is no longer in the
// input ended: the tasks that succeeded or failed, and whether the job
// completed (succeeded or failed, not cancelled); ok false when unknown.
func (w *fawkesWeighting) step(in *fsm.FawkesInput, ended func(id uint64) (done int64, completed, ok bool)) fawkesDecision {
	var out fawkesDecision
	w.meter.Advance(in.Now)
	w.countCompletions(in, ended)
	mins := fawkes.MinimumShares(w.cfg, contributions(in))
	if in.Now >= w.meter.NextTick() {
		d := w.meter.Tick(in.Now, w.active, mins)
		out.Tick = &d
		if d.Resize {
			copy(w.weights, d.Weights)
			out.Shares = d.Shares
		}
	}
	changed := w.fresh
	w.fresh = false
	for i := range in.Accounts {
		on := hasWork(&in.Accounts[i])
		if on == w.active[i] {
			continue
		}
		changed = true
		w.active[i] = on
		w.weights[i] = 0
		if on {
			w.weights[i] = fawkes.MeanActiveWeight(w.weights, w.active)
		}
	}
	if changed {
		out.Shares = fawkes.Shares(w.cfg, fawkes.NormalizeActive(w.weights, w.active), mins, w.active)
	}
	if out.Shares != nil {
		copy(w.shares, out.Shares)
	}
	for i := range in.Accounts {
		s, held := w.sample(in, i)
		w.meter.Set(i, s, held)
	}
	if out.Shares != nil && sameShares(out.Shares, in) {
		out.Shares = nil
	}
	return out
}

// countCompletions tells the meter what finished since the last step.
// The meter only adds completions up, so the order they are told in does
// not matter.
func (w *fawkesWeighting) countCompletions(in *fsm.FawkesInput, ended func(uint64) (int64, bool, bool)) {
	w.steps++
	for i := range in.Accounts {
		for _, j := range in.Accounts[i].Jobs {
			s, ok := w.jobs[j.ID]
			if !ok {
				s = &seenJob{}
				w.jobs[j.ID] = s
			}
			if d := j.Done - s.done; d > 0 {
				w.meter.Completed(i, 0, int(d))
			}
			s.done, s.account, s.seen = j.Done, i, w.steps
		}
	}
	for id, s := range w.jobs {
		if s.seen == w.steps {
			continue
		}
		if done, completed, ok := ended(id); ok {
			jobs := 0
			if completed {
				jobs = 1
			}
			w.meter.Completed(s.account, jobs, int(max(done-s.done, 0)))
		}
		delete(w.jobs, id)
	}
}

// sample is account i's state for the weighting policies, and the
// fraction of the cluster it holds.
func (w *fawkesWeighting) sample(in *fsm.FawkesInput, i int) (fawkes.Sample, float64) {
	a := &in.Accounts[i]
	var s fawkes.Sample
	for _, j := range a.Jobs {
		if j.Pending <= 0 {
			continue
		}
		s.WaitingJobs++
		s.WaitingTasks += float64(j.Pending)
		s.WaitingWork += float64(j.Pending) * j.Walltime.Seconds() * fawkes.Held(j.Demand, in.Capacity)
		ref := max(j.Walltime, slowdownReference).Seconds()
		s.Slowdown += max(in.Now.Sub(j.SubmittedAt), 0).Seconds() / ref
		s.SlowdownGrowth += 1 / ref
	}
	if s.WaitingJobs > 0 {
		s.Slowdown /= s.WaitingJobs
		s.SlowdownGrowth /= s.WaitingJobs
	}
	proc, disk := fawkes.ProcessorResource(in.Resources), w.cfg.DiskResource(in.Resources)
	s.ProcessorUse = partitionUse(a.Running, in.Capacity, proc, w.shares[i])
	s.DiskUse = partitionUse(a.Running, in.Capacity, disk, w.shares[i])
	return s, fawkes.Held(a.Running, in.Capacity)
}

// partitionUse is the fraction of a partition's resource k in use (see
// fawkes.PartitionUse); a resource the cluster does not have counts as unused.
func partitionUse(running, capacity ledger.Vector, k int, share float64) float64 {
	if k >= len(running) || k >= len(capacity) {
		return 0
	}
	return fawkes.PartitionUse(running[k], share*capacity[k])
}

func hasWork(a *fsm.FawkesAccount) bool {
	if !a.Running.IsZero() {
		return true
	}
	for _, j := range a.Jobs {
		if j.Pending > 0 || j.Running > 0 {
			return true
		}
	}
	return false
}

func contributions(in *fsm.FawkesInput) []float64 {
	c := make([]float64, len(in.Accounts))
	for i := range in.Accounts {
		c[i] = in.Accounts[i].Weight
	}
	return c
}

// sameShares reports whether shares are, within rounding, the partitions
// the input already carries.
func sameShares(shares []float64, in *fsm.FawkesInput) bool {
	for i := range shares {
		if math.Abs(shares[i]-in.Accounts[i].Share) > 1e-12 {
			return false
		}
	}
	return true
}

// sharesCommand is the SetShares command for shares over the input's
// accounts.
func sharesCommand(in *fsm.FawkesInput, shares []float64) *fsm.SetShares {
	cmd := &fsm.SetShares{Shares: []fsm.AccountShare{}}
	total := 0.0
	for i, s := range shares {
		if s > 0 {
			cmd.Shares = append(cmd.Shares, fsm.AccountShare{Account: in.Accounts[i].Name, Share: s})
			total += s
		}
	}
	// Rounding may take the sum a hair over 1; scale it back.
	if total > 1 {
		for i := range cmd.Shares {
			cmd.Shares[i].Share /= total
		}
	}
	return cmd
}
