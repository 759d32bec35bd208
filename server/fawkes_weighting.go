package server

import (
	"math"
	"slices"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/fawkes"
)

// fawkesWeighting is the leader's FAWKES weighting: the controller the
// simulator runs too (fawkes.Controller), fed from the FSM. It samples
// every account at each step, and commits the partitions the controller
// decides: at the end of each interval T when the global discrimination
// exceeds τ, and whenever an account gains or runs out of work. It keeps
// no clock: every step is handed the FSM's input at a time. Its state is
// the leader's only: a new leader starts afresh from the committed
// partitions.
type fawkesWeighting struct {
	cfg   fawkes.Config // defaults filled in
	names []string
	ctl   *fawkes.Controller
	// jobs are the jobs not yet seen ending: how many of their tasks had
	// ended when last sampled, their account, and the step that saw them
	// last (steps counts the steps).
	jobs  map[uint64]*seenJob
	steps uint64
	// step's input, kept to spare the allocation.
	in fawkes.StepInput
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

// newFawkesWeighting starts the weighting at the input's time, from the
// partitions committed there: an account's share is its weight.
func newFawkesWeighting(in *fsm.FawkesInput) *fawkesWeighting {
	n := len(in.Accounts)
	shares, work := make([]float64, n), make([]bool, n)
	w := &fawkesWeighting{
		cfg: in.Config.WithDefaults(), names: accountNames(in), jobs: make(map[uint64]*seenJob),
		in: fawkes.StepInput{Accounts: make([]fawkes.Account, n)},
	}
	for i := range in.Accounts {
		a := &in.Accounts[i]
		shares[i], work[i] = a.Share, hasWork(a)
		for _, j := range a.Jobs {
			w.jobs[j.ID] = &seenJob{done: j.Done, account: i}
		}
	}
	w.ctl = fawkes.NewController(w.cfg, in.Now, shares, work)
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
	proc, disk := fawkes.ProcessorResource(in.Resources), w.cfg.DiskResource(in.Resources)
	w.in.Now = in.Now
	w.in.Mins = fawkes.MinimumShares(w.cfg, contributions(in))
	w.in.Processors, w.in.Disk = used(in.Capacity, in.Capacity, proc), used(in.Capacity, in.Capacity, disk)
	for i := range in.Accounts {
		a := &in.Accounts[i]
		acct := fawkes.Account{
			Work: hasWork(a), Processors: used(a.Running, in.Capacity, proc), Disk: used(a.Running, in.Capacity, disk),
			Held: fawkes.Held(a.Running, in.Capacity),
		}
		for _, j := range a.Jobs {
			acct.Wait(fawkes.WaitingJob{
				Tasks: j.Pending, TaskTime: j.Walltime, TaskHeld: fawkes.Held(j.Demand, in.Capacity),
				// The leader knows a job's time alone only as its
				// declared walltime.
				Waited: in.Now.Sub(j.SubmittedAt), Alone: j.Walltime,
			})
		}
		w.in.Accounts[i] = acct
	}
	w.countCompletions(in, ended)
	d := w.ctl.Step(&w.in)
	out := fawkesDecision{Shares: d.Shares, Tick: d.Tick}
	if out.Shares != nil && sameShares(out.Shares, in) {
		out.Shares = nil
	}
	return out
}

// countCompletions adds to the step's input what finished since the last
// step, as fawkes.Completions defines it: the tasks of the jobs in the
// input as their count of ended tasks grows, and a job once it has left
// the input, succeeded or failed.
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
				w.in.Accounts[i].Done.Tasks += int(d)
			}
			s.done, s.account, s.seen = j.Done, i, w.steps
		}
	}
	for id, s := range w.jobs {
		if s.seen == w.steps {
			continue
		}
		if done, completed, ok := ended(id); ok {
			c := &w.in.Accounts[s.account].Done
			if completed {
				c.Jobs++
			}
			c.Tasks += int(max(done-s.done, 0))
		}
		delete(w.jobs, id)
	}
}

// used is amount k of v; a resource the cluster does not have counts as
// unused (and as no capacity).
func used(v, capacity ledger.Vector, k int) float64 {
	if k >= len(v) || k >= len(capacity) {
		return 0
	}
	return v[k]
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
