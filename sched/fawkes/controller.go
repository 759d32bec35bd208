package fawkes

import (
	"time"

	"github.com/longfair/longfair/ledger"
)

// SlowdownFloor is the shortest time a job's slowdown is measured against
// (JS, and the simulator's slowdown reports): a job of a few seconds does
// not get a slowdown in the thousands from a short wait, as is usual for
// traces.
const SlowdownFloor = 10 * time.Second

// Slowdown is a job's slowdown after waiting for waited, against alone, its
// time alone on an empty cluster (at least SlowdownFloor), and how fast it
// grows per second while it waits.
func Slowdown(waited, alone time.Duration) (slowdown, growth float64) {
	ref := max(alone, SlowdownFloor).Seconds()
	return max(waited, 0).Seconds() / ref, 1 / ref
}

// WaitingJob is a job with tasks waiting to start, as the weighting
// policies see it.
type WaitingJob struct {
	// Tasks is how many of its tasks wait.
	Tasks int64
	// TaskTime is one task's time (the leader knows the declared
	// walltime, the simulator the trace's runtime), and TaskHeld the
	// fraction of the cluster one task holds (Held of its demand): DD's
	// work is Tasks × TaskTime × TaskHeld.
	TaskTime time.Duration
	TaskHeld float64
	// Waited is the time since the job was submitted and Alone its time
	// alone on an empty cluster: JS's slowdown (see Slowdown).
	Waited, Alone time.Duration
}

// Completions are what an account completed since the last step, as JT and
// TT count them (FAWKES §4.3): a job counts once every one of its tasks
// has ended, succeeded or failed (a cancelled job is not completed, and a
// job of several stages counts once, when its last stage ends); a task
// counts when it ends, succeeded or failed.
type Completions struct {
	Jobs, Tasks int
}

// Account is one account's state at a step, as the controller's caller
// sees it.
type Account struct {
	// Work says whether the account has tasks waiting or running: only
	// such an account holds a partition.
	Work bool
	// Processors and Disk are the amounts of the processor and disk
	// resources (ProcessorResource, Config.DiskResource) it holds, and
	// Held the fraction of the cluster (Held of what it runs).
	Processors, Disk, Held float64
	// Done is what it completed since the last step.
	Done Completions

	waiting Sample
}

// Wait adds one of the account's waiting jobs; a job with no task waiting
// is passed over.
func (a *Account) Wait(j WaitingJob) {
	if j.Tasks <= 0 {
		return
	}
	s := &a.waiting
	s.WaitingJobs++
	s.WaitingTasks += float64(j.Tasks)
	s.WaitingWork += float64(j.Tasks) * j.TaskTime.Seconds() * j.TaskHeld
	sd, growth := Slowdown(j.Waited, j.Alone)
	s.Slowdown += sd
	s.SlowdownGrowth += growth
}

// StepInput is what a controller step is handed.
type StepInput struct {
	// Now is the time of the step; it must not go backwards.
	Now ledger.Time
	// Accounts are the accounts, in the order the controller was made for.
	Accounts []Account
	// Mins are the accounts' minimum shares (MinimumShares).
	Mins []float64
	// Processors and Disk are the cluster's capacity of the two resources
	// the usage policies watch (0 when the cluster lacks one).
	Processors, Disk float64
}

// Step is what a controller step decided.
type Step struct {
	// Tick is set when the step ended an interval, with its outcome, and
	// TickShares are then the partitions right after it: the new ones when
	// it resized, the old ones otherwise.
	Tick       *Decision
	TickShares []float64
	// Shares, when not nil, are new partitions, in the order of the
	// accounts: a resize, or an account that gained or ran out of work.
	Shares []float64
}

// Controller is FAWKES weighting's controller, which the leader and the
// simulator both run: it time-averages the accounts' samples over each
// interval T with a Meter, at the end of each interval computes new
// weights and resizes the partitions when the global discrimination
// exceeds τ, and between intervals gives an account that gains work a
// partition at once, with the mean weight of the others, and takes back
// the partition of one that runs out of work. It keeps no clock: every
// step says what time it is.
type Controller struct {
	cfg     Config
	meter   *Meter
	active  []bool
	weights []float64
	shares  []float64
	// fresh is set until the first step, which gives the accounts with
	// work partitions whatever the shares it started from.
	fresh bool
}

// NewController starts the weighting at start for accounts holding the
// partitions shares; work says which of them have work, and each of those
// starts with its partition as its weight (or, with none, the mean weight
// of the others). cfg's zero fields mean their defaults.
func NewController(cfg Config, start ledger.Time, shares []float64, work []bool) *Controller {
	n := len(shares)
	c := &Controller{
		cfg: cfg.WithDefaults(), meter: NewMeter(cfg, n, start),
		active: make([]bool, n), weights: make([]float64, n), shares: append([]float64(nil), shares...), fresh: true,
	}
	for i := range shares {
		c.active[i] = work[i]
		if work[i] {
			c.weights[i] = shares[i]
		}
	}
	mean := MeanActiveWeight(c.weights, c.active)
	for i, on := range c.active {
		if on && c.weights[i] <= 0 {
			c.weights[i] = mean
		}
	}
	return c
}

// Config is the controller's configuration, defaults filled in.
func (c *Controller) Config() Config { return c.cfg }

// NextTick is when the current interval ends.
func (c *Controller) NextTick() ledger.Time { return c.meter.NextTick() }

// Shares are the partitions as the controller last decided them; the
// caller must not change them.
func (c *Controller) Shares() []float64 { return c.shares }

// Active reports whether the controller counts account i as having work.
func (c *Controller) Active(i int) bool { return c.active[i] }

// Step takes the accounts' state at in.Now. It counts what they
// completed into the current interval; ends the interval when it is due —
// at the interval's end, not at in.Now, so that the intervals stay T long
// whenever the steps fall (every interval due by in.Now ends in turn, and
// Step reports the last); gives partitions to the accounts that gained
// work and takes them from those that ran out; and samples the accounts
// against their partitions until the next step.
func (c *Controller) Step(in *StepInput) Step {
	var out Step
	for i := range in.Accounts {
		if d := in.Accounts[i].Done; d.Jobs > 0 || d.Tasks > 0 {
			c.meter.Completed(i, d.Jobs, d.Tasks)
		}
	}
	for c.meter.NextTick() <= in.Now {
		d := c.meter.Tick(c.meter.NextTick(), c.active, in.Mins)
		if d.Resize {
			copy(c.weights, d.Weights)
			copy(c.shares, d.Shares)
			out.Shares = c.shares
		}
		out.Tick = &d
	}
	if out.Tick != nil {
		out.TickShares = append([]float64(nil), c.shares...)
	}
	c.meter.Advance(in.Now)
	changed := c.fresh
	c.fresh = false
	for i := range in.Accounts {
		on := in.Accounts[i].Work
		if on == c.active[i] {
			continue
		}
		changed = true
		c.active[i] = on
		c.weights[i] = 0
		if on {
			c.weights[i] = MeanActiveWeight(c.weights, c.active)
		}
	}
	if changed {
		copy(c.shares, Shares(c.cfg, NormalizeActive(c.weights, c.active), in.Mins, c.active))
		out.Shares = c.shares
	}
	if out.Shares != nil {
		out.Shares = append([]float64(nil), out.Shares...)
	}
	for i := range in.Accounts {
		a := &in.Accounts[i]
		s := a.waiting
		if s.WaitingJobs > 0 {
			s.Slowdown /= s.WaitingJobs
			s.SlowdownGrowth /= s.WaitingJobs
		}
		s.ProcessorUse = PartitionUse(a.Processors, c.shares[i]*in.Processors)
		s.DiskUse = PartitionUse(a.Disk, c.shares[i]*in.Disk)
		c.meter.Set(i, s, a.Held)
	}
	return out
}
