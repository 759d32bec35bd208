package fsm

import (
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Quote is what submitting a job would do, answered without submitting:
// its demand as the cluster would store it (rounded to whole units), the
// SU hold it would place (the most it can cost), what one task costs per
// hour it runs, and the account's available SU now. Refusal, when not
// nil, is why the submission would be refused now (an unknown account,
// a shape no nodes can hold, too few SU); nothing else is then set
// beyond what could be worked out.
type Quote struct {
	Demand     map[string]float64
	Hold       ledger.SU
	TaskHourly ledger.SU
	Available  ledger.SU
	Refusal    error
	// Job is the job as the scheduler would see it pending, for a
	// forecast of its start (sched.Engine.Explain over View).
	Job sched.Job
}

// QuoteJobID is the id a quoted job has in the scheduler's view: no real
// job has it (ids count up from 1).
const QuoteJobID = ^uint64(0)

// Quote answers what SubmitJob c would do at time at, changing nothing.
// c must be valid (its own checks, as Encode runs them); CheckFit is
// applied as set.
func (f *FSM) Quote(c *SubmitJob, at ledger.Time) (Quote, error) {
	if err := validateShape(c, rules{version: CommandVersion}); err != nil {
		return Quote{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.st
	demand, hold, _, refusal := st.admit(c)
	if refusal != nil {
		return Quote{Refusal: refusal}, nil
	}
	q := Quote{Demand: named(st.settings.Resources, demand), Hold: hold}
	hourly, err := ledger.Cost(3600e9, allocation(demand, c.Nodes), st.settings.BillingWeights, st.settings.BillingRule)
	if err == nil {
		q.TaskHourly = hourly
	}
	b := st.su.Balance(c.Account, max(at, st.now))
	q.Available = b.Available
	if hold > b.Available {
		q.Refusal = refuse(KindInsufficientFunds, "job of %d tasks%s × %v needs a hold of %v SU and %s has %v SU available: ask for less, or ask an admin for a grant",
			c.Tasks, nodesPhrase(c.Nodes), c.Walltime, hold, c.Account, b.Available)
	}
	j := &jobRecord{ID: QuoteJobID, Demand: demand, Nodes: c.Nodes, Walltime: c.Walltime}
	q.Job = j.viewJob(0, int(c.Tasks))
	return q, nil
}
