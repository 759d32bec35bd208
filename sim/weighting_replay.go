package sim

import (
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// weightingState is every account's discrimination, which each replay
// measures, and under fawkes the weighting that resizes the partitions.
type weightingState struct {
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

// initWeighting sets up the discrimination of every replay and, under fawkes,
// the weighting.
func (r *replay) initWeighting() {
	weights := make([]float64, len(r.w.Accounts))
	for i, a := range r.w.Accounts {
		weights[i] = a.Weight
	}
	isFawkes := r.cfg.Settings.Policy == sched.Fawkes
	r.weighting.disc = newDiscTracker(weights, isFawkes)
	if isFawkes {
		r.weighting.fawkes = newFawkesReplay(r, r.weighting.disc)
	}
}

// fawkesWake ends a FAWKES weighting interval that ends before the next
// event, at t: it resizes the partitions if the weighting says so and
// schedules into them. It reports whether it did (the caller then looks for
// the next event again).
func (r *replay) fawkesWake(t ledger.Time) (bool, error) {
	f := r.weighting.fawkes
	if f == nil || !r.weighting.started {
		return false, nil
	}
	tick := f.nextTick()
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
	f := r.weighting.fawkes
	if f == nil {
		return nil
	}
	if !r.weighting.started {
		f.start(t)
		r.weighting.started = true
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

// finishWeighting adds the discrimination and the FAWKES report to a result.
func (r *replay) finishWeighting(res *Result) {
	usage := make([]ledger.Vector, len(res.Accounts))
	for a := range res.Accounts {
		usage[a] = res.Accounts[a].Usage
	}
	d, v := r.weighting.disc.result(res.End, usage, r.capacity)
	for a := range res.Accounts {
		res.Accounts[a].Discrimination = d[a]
	}
	res.DiscriminationVariance = v
	if f := r.weighting.fawkes; f != nil {
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
// policy: the controller the leader runs (fawkes.Controller), stepped after
// every step of the replay and at the end of every interval T; it gives the
// accounts their partitions through Account.Share.
type fawkesReplay struct {
	cfg        fawkes.Config
	ctl        *fawkes.Controller // from the replay's first event on
	initial    []float64          // the partitions until then
	mins       []float64
	in         fawkes.StepInput
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
		cfg: cfg, mins: fawkes.MinimumShares(cfg, contrib),
		proc: fawkes.ProcessorResource(r.w.Resources), disk: cfg.DiskResource(r.w.Resources),
		jobsSeen: make([]int, n), tasksDone: make([]int, n), disc: disc,
	}
	f.in = fawkes.StepInput{
		Accounts: make([]fawkes.Account, n), Mins: f.mins, Processors: r.capacity[f.proc], Disk: r.capacity[f.disk],
	}
	// Until the first accounts arrive every account holds an equal part,
	// so that the engine always has partitions to go by.
	all := make([]bool, n)
	equal := make([]float64, n)
	for i := range all {
		all[i], equal[i] = true, 1/float64(n)
	}
	f.initial = fawkes.Shares(cfg, equal, f.mins, all)
	f.apply(r, f.initial, 0)
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

// start begins the first interval at the replay's first event, no account
// counted as having work yet.
func (f *fawkesReplay) start(t ledger.Time) {
	f.ctl = fawkes.NewController(f.cfg, t, f.initial, make([]bool, len(f.initial)))
}

// nextTick is when the current interval ends.
func (f *fawkesReplay) nextTick() ledger.Time { return f.ctl.NextTick() }

// settled steps the controller after a step of the replay: it admits or
// releases the accounts whose work started or ran out and samples them;
// it reports whether the partitions changed.
func (f *fawkesReplay) settled(r *replay, t ledger.Time) bool {
	d := f.step(r, t)
	return d.Shares != nil
}

// tick steps the controller at t, the end of an interval; it reports
// whether the partitions changed.
func (f *fawkesReplay) tick(r *replay, t ledger.Time) bool {
	d := f.step(r, t)
	if d.Tick != nil {
		f.ticks = append(f.ticks, FawkesTick{
			Time: t, Weights: d.Tick.Weights, Shares: d.TickShares, Variance: d.Tick.Variance, Resized: d.Tick.Resize,
		})
	}
	return d.Shares != nil
}

// step hands the controller the accounts' state at t and gives the
// accounts the partitions it decides.
func (f *fawkesReplay) step(r *replay, t ledger.Time) fawkes.Step {
	f.in.Now = t
	for a := range f.in.Accounts {
		va := &r.view.Accounts[a]
		acct := fawkes.Account{
			Work: r.activeAccount(a), Processors: va.Running[f.proc], Disk: va.Running[f.disk], Held: fawkes.Held(va.Running, r.capacity),
		}
		if jobs := r.accts[a].jobs - f.jobsSeen[a]; jobs > 0 || f.tasksDone[a] > 0 {
			acct.Done = fawkes.Completions{Jobs: jobs, Tasks: f.tasksDone[a]}
			f.jobsSeen[a], f.tasksDone[a] = r.accts[a].jobs, 0
		}
		for _, q := range va.Queue {
			if q.Pending <= 0 {
				continue
			}
			root := &r.jobs[r.jobs[q.ID].root]
			acct.Wait(fawkes.WaitingJob{
				Tasks: int64(q.Pending), TaskTime: r.w.Jobs[q.ID].Runtime, TaskHeld: fawkes.Held(q.Demand, r.capacity),
				Waited: t.Sub(root.arrived), Alone: root.ideal,
			})
		}
		if acct.Work != f.ctl.Active(a) {
			f.disc.setActive(a, acct.Work, t)
		}
		f.in.Accounts[a] = acct
	}
	d := f.ctl.Step(&f.in)
	if d.Shares != nil {
		f.apply(r, d.Shares, t)
	}
	return d
}

// apply gives the accounts new partitions.
func (f *fawkesReplay) apply(r *replay, shares []float64, t ledger.Time) {
	for a := range shares {
		r.view.Accounts[a].Share = shares[a]
	}
	f.disc.setShares(shares, t)
	f.changes = append(f.changes, PartitionChange{Time: t, Shares: append([]float64(nil), shares...)})
}
