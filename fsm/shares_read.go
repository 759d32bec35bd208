package fsm

import (
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// FawkesInput is what the leader's FAWKES weighting samples at one
// instant: the settings, the capacity of the up nodes, and every account
// with its committed partition and its jobs that have not ended.
type FawkesInput struct {
	Now    ledger.Time
	Policy sched.Policy
	// Config is the weighting's settings as set (zero fields mean their
	// defaults; see fawkes.Config.WithDefaults).
	Config    fawkes.Config
	Resources []string
	Capacity  ledger.Vector
	// SharesAt is when the partitions were last set (0: never).
	SharesAt ledger.Time
	Accounts []FawkesAccount
}

// FawkesAccount is one account as FAWKES weighting samples it.
type FawkesAccount struct {
	Name string
	// Weight is the account's effective weight, its contribution to the
	// cluster for the minimum shares.
	Weight float64
	// Share is its committed partition (0: none).
	Share float64
	// Running is what its running tasks hold.
	Running ledger.Vector
	// Jobs are its jobs that have not ended, by id.
	Jobs []FawkesJob
}

// FawkesJob is a job that has not ended.
type FawkesJob struct {
	ID          uint64
	Demand      ledger.Vector
	Walltime    time.Duration
	SubmittedAt ledger.Time
	// Pending tasks wait to be placed, Running hold resources, and Done
	// succeeded or failed.
	Pending, Running, Done int64
}

// FawkesInput returns the accounts as FAWKES weighting samples them at now.
// Under any other policy it carries the policy and time alone: the leader
// samples every second whatever the policy, to see a switch to fawkes, and
// copying every job that has not ended (100,000 pending is a normal queue)
// each time would cost a core's tenth and hold the state's read lock,
// behind which writes and then every other read wait.
func (f *FSM) FawkesInput(now ledger.Time) FawkesInput {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.st
	if st.settings.Policy != sched.Fawkes {
		return FawkesInput{Now: max(now, st.now), Policy: st.settings.Policy}
	}
	n := len(st.settings.Resources)
	in := FawkesInput{
		Now: max(now, st.now), Policy: st.settings.Policy, Config: st.settings.Fawkes.config(),
		Resources: slices.Clone(st.settings.Resources), Capacity: pad(st.capacity.Clone(), n),
		SharesAt: st.shares.at, Accounts: make([]FawkesAccount, 0, len(st.accountNames)),
	}
	for _, name := range st.accountNames {
		a := FawkesAccount{Name: name, Weight: st.weights[name], Share: st.shares.shares[name], Running: ledger.NewVector(n)}
		for _, id := range st.accountJobs[name] {
			j := st.jobs[id]
			a.Running.AddScaled(j.Demand, float64(j.Running))
			a.Jobs = append(a.Jobs, FawkesJob{
				ID: j.ID, Demand: pad(j.Demand.Clone(), n), Walltime: j.Walltime, SubmittedAt: j.SubmittedAt,
				Pending: j.pending(), Running: j.Running, Done: j.Succeeded + j.Failed,
			})
		}
		in.Accounts = append(in.Accounts, a)
	}
	return in
}
