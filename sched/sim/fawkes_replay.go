package sim

import (
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// paperState is what the DFF and FAWKES papers add to a replay: every
// account's discrimination, and under fawkes the weighting itself.
type paperState struct {
	disc    *discTracker
	fawkes  *fawkesReplay
	started bool
}

// FawkesReport is what FAWKES weighting did in a fawkes replay.
type FawkesReport struct {
	// Config is the weighting's configuration, defaults filled in.
	Config fawkes.Config
	// Ticks are the weighting intervals; Resizes counts those that changed
	// the partitions.
	Ticks   []FawkesTick
	Resizes int
	// Partitions are the shares over time: every change, from resizes and
	// from accounts gaining or running out of work.
	Partitions []PartitionChange
}

// PartitionChange is the fawkes shares from Time on.
type PartitionChange struct {
	Time   ledger.Time
	Shares []float64
}

// initPapers sets up the discrimination of every replay and, under fawkes,
// the weighting.
func (r *replay) initPapers() {
	weights := make([]float64, len(r.w.Accounts))
	for i, a := range r.w.Accounts {
		weights[i] = a.Weight
	}
	isFawkes := r.cfg.Settings.Policy == sched.Fawkes
	r.papers.disc = newDiscTracker(weights, isFawkes)
	if isFawkes {
		r.papers.fawkes = newFawkesReplay(r, r.papers.disc)
	}
}

// fawkesWake ends a FAWKES weighting interval that ends before the next
// event, at t: it resizes the partitions if the weighting says so and
// schedules into them. It reports whether it did (the caller then looks for
// the next event again).
func (r *replay) fawkesWake(t ledger.Time) (bool, error) {
	f := r.papers.fawkes
	if f == nil || !r.papers.started {
		return false, nil
	}
	tick := f.meter.NextTick()
	if tick > t {
		return false, nil
	}
	r.advanceTo(tick)
	r.now, r.view.Now = tick, tick
	if f.tick(r, tick) && r.pending > 0 {
		r.updateBaselines()
		if err := r.pass(); err != nil {
			return true, err
		}
	}
	f.settled(r, tick)
	return true, nil
}

// fawkesSettled samples the accounts after a step, admits the accounts that
// gained work and releases those that ran out, and schedules into the new
// partitions.
func (r *replay) fawkesSettled(t ledger.Time) error {
	f := r.papers.fawkes
	if f == nil {
		return nil
	}
	if !r.papers.started {
		f.start(t)
		r.papers.started = true
	}
	if f.settled(r, t) && r.pending > 0 {
		r.updateBaselines()
		if err := r.pass(); err != nil {
			return err
		}
		f.settled(r, t) // sample what the pass started
	}
	return nil
}

// finishPapers adds the discrimination and the FAWKES report to a result.
func (r *replay) finishPapers(res *Result) {
	usage := make([]ledger.Vector, len(res.Accounts))
	for a := range res.Accounts {
		usage[a] = res.Accounts[a].Usage
	}
	d, v := r.papers.disc.result(res.End, usage, r.capacity)
	for a := range res.Accounts {
		res.Accounts[a].Discrimination = d[a]
	}
	res.DiscriminationVariance = v
	if f := r.papers.fawkes; f != nil {
		rep := &FawkesReport{Config: f.cfg, Ticks: f.ticks, Partitions: f.changes}
		for _, tk := range f.ticks {
			if tk.Resized {
				rep.Resizes++
			}
		}
		res.Fawkes = rep
	}
}

// FawkesTick is one weighting interval of a fawkes replay.
type FawkesTick struct {
	// Time is the end of the interval.
	Time ledger.Time
	// Weights are the weights the interval's averages gave, Shares the
	// accounts' partitions after the tick (the new ones when Resized, the
	// old ones otherwise).
	Weights, Shares []float64
	// Variance is the global discrimination Var(D) over the interval
	// against the new weights' shares; Resized says whether it exceeded τ
	// (or the weighting is a baseline) and the partitions changed.
	Variance float64
	Resized  bool
}

// fawkesReplay runs FAWKES weighting inside a replay under the fawkes
// policy: it samples the accounts after every step, ends an interval every
// T, and gives the accounts their partitions through Account.Share. An
// account that gains work between ticks is admitted at once with the mean
// weight of the others (so at least its minimum share); one that runs out
// of work gives its partition back to the others at once.
type fawkesReplay struct {
	cfg        fawkes.Config
	meter      *fawkes.Meter
	mins       []float64
	active     []bool
	weights    []float64
	shares     []float64
	proc, disk int
	jobsSeen   []int
	tasksDone  []int
	ticks      []FawkesTick
	changes    []PartitionChange
	disc       *discTracker
}

func newFawkesReplay(r *replay, disc *discTracker) *fawkesReplay {
	n := len(r.w.Accounts)
	cfg := r.cfg.Settings.Fawkes.WithDefaults()
	contrib := make([]float64, n)
	for i, a := range r.w.Accounts {
		contrib[i] = a.Weight
	}
	f := &fawkesReplay{
		cfg: cfg, meter: fawkes.NewMeter(cfg, n, 0), mins: fawkes.MinimumShares(cfg, contrib),
		active: make([]bool, n), weights: make([]float64, n), shares: make([]float64, n),
		proc: fawkes.ProcessorResource(r.w.Resources), disk: cfg.DiskResource(r.w.Resources),
		jobsSeen: make([]int, n), tasksDone: make([]int, n), disc: disc,
	}
	// Until the first accounts arrive every account holds an equal part,
	// so that the engine always has partitions to go by.
	all := make([]bool, n)
	equal := make([]float64, n)
	for i := range all {
		all[i], equal[i] = true, 1/float64(n)
	}
	f.apply(r, fawkes.Shares(cfg, equal, f.mins, all), 0)
	user := r.cfg.Trace
	r.cfg.Trace = func(e TraceEvent) {
		if e.Kind == End {
			f.tasksDone[r.w.Jobs[e.Job].Account] += e.Tasks
		}
		if user != nil {
			user(e)
		}
	}
	return f
}

// start begins the first interval at the replay's first event.
func (f *fawkesReplay) start(t ledger.Time) {
	f.meter = fawkes.NewMeter(f.cfg, len(f.active), t)
}

// settled samples every account after a step and admits or releases the
// accounts whose work started or ran out; it reports whether the
// partitions changed.
func (f *fawkesReplay) settled(r *replay, t ledger.Time) bool {
	f.meter.Advance(t)
	changed := false
	for a := range f.active {
		on := r.activeAccount(a)
		if on == f.active[a] {
			continue
		}
		changed = true
		f.active[a] = on
		f.disc.setActive(a, on, t)
		if on {
			f.weights[a] = fawkes.MeanActiveWeight(f.weights, f.active)
		} else {
			f.weights[a] = 0
		}
	}
	if changed {
		f.apply(r, fawkes.Shares(f.cfg, fawkes.NormalizeActive(f.weights, f.active), f.mins, f.active), t)
	}
	for a := range f.active {
		s, held := f.sample(r, a, t)
		f.meter.Set(a, s, held)
		if jobs := r.accts[a].jobs - f.jobsSeen[a]; jobs > 0 || f.tasksDone[a] > 0 {
			f.meter.Completed(a, jobs, f.tasksDone[a])
			f.jobsSeen[a], f.tasksDone[a] = r.accts[a].jobs, 0
		}
	}
	return changed
}

// tick ends a weighting interval at t; it reports whether the partitions
// changed.
func (f *fawkesReplay) tick(r *replay, t ledger.Time) bool {
	d := f.meter.Tick(t, f.active, f.mins)
	if d.Resize {
		copy(f.weights, d.Weights)
		f.apply(r, d.Shares, t)
	}
	f.ticks = append(f.ticks, FawkesTick{
		Time: t, Weights: d.Weights, Shares: append([]float64(nil), f.shares...), Variance: d.Variance, Resized: d.Resize,
	})
	return d.Resize
}

// apply gives the accounts new partitions.
func (f *fawkesReplay) apply(r *replay, shares []float64, t ledger.Time) {
	copy(f.shares, shares)
	for a := range shares {
		r.view.Accounts[a].Share = shares[a]
	}
	f.disc.setShares(shares, t)
	f.changes = append(f.changes, PartitionChange{Time: t, Shares: append([]float64(nil), shares...)})
}

// sample is account a's state for the weighting policies, and the fraction
// of the cluster it holds.
func (f *fawkesReplay) sample(r *replay, a int, t ledger.Time) (fawkes.Sample, float64) {
	va := &r.view.Accounts[a]
	s := fawkes.Sample{WaitingTasks: float64(r.accts[a].pending)}
	for _, q := range va.Queue {
		if q.Pending <= 0 {
			continue
		}
		s.WaitingJobs++
		switch f.cfg.Weighting {
		case fawkes.DD:
			s.WaitingWork += float64(q.Pending) * r.w.Jobs[q.ID].Runtime.Seconds() * fawkes.Held(q.Demand, r.capacity)
		case fawkes.JS:
			root := &r.jobs[r.jobs[q.ID].root]
			ref := max(root.ideal, slowdownFloor).Seconds()
			s.Slowdown += t.Sub(root.arrived).Seconds() / ref
			s.SlowdownGrowth += 1 / ref
		}
	}
	if s.WaitingJobs > 0 {
		s.Slowdown /= s.WaitingJobs
		s.SlowdownGrowth /= s.WaitingJobs
	}
	s.ProcessorUse = fawkes.PartitionUse(va.Running[f.proc], f.shares[a]*r.capacity[f.proc])
	s.DiskUse = fawkes.PartitionUse(va.Running[f.disk], f.shares[a]*r.capacity[f.disk])
	return s, fawkes.Held(va.Running, r.capacity)
}
