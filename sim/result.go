package sim

import (
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Result is what one replay of a workload under one policy produced.
type Result struct {
	Policy    sched.Policy
	Settings  sched.Settings
	Window    ledger.Window
	Workload  string
	Resources []string
	Units     []string
	Accounts  []AccountResult
	// Start is the first arrival and End the last completion (or the
	// horizon); Makespan is End−Start.
	Start, End ledger.Time
	Makespan   time.Duration
	// Utilization per resource: resource-seconds used over capacity×makespan.
	Utilization []float64
	// CompletedJobs counts the user-visible jobs completed. MeanWait and
	// MaxWait are over them, from submission to the first task's start;
	// MeanBoundedSlowdown is the mean of max(1, completion / max(alone,
	// 10 s)), alone being the job's time on an empty cluster — for a job
	// of one stage, (wait+run)/max(run, 10 s), the usual bounded slowdown.
	CompletedJobs       int
	MeanWait, MaxWait   time.Duration
	MeanBoundedSlowdown float64
	// Samples are β per account over time, thinned to at most a few
	// thousand points.
	Samples Samples
	// Slots holds per-slot results for slotted input.
	Slots []SlotResult
	// Unschedulable lists jobs whose tasks can never run; NeverSubmitted
	// counts jobs that waited for one of those (or for a job that did not
	// finish by the horizon).
	Unschedulable  []Unschedulable
	NeverSubmitted int
	// UnfinishedTasks counts tasks that had not ended when the replay
	// stopped: still pending or running at the horizon, or blocked behind
	// a job the policy never lets run.
	UnfinishedTasks int
	// Completions holds, for each job of the workload that begins a
	// user-visible job (a map, not its reduce), the time from its
	// submission to its last stage's end, or -1 when it did not complete
	// (or is a later stage). Comparisons between policies use it to look at
	// the same jobs.
	Completions []time.Duration
	// Counters of the replay itself.
	Events, Passes, Placements int
	// DiscriminationVariance is FAWKES's global discrimination factor
	// Var(D) over the accounts that had work, in (share·s)² (see
	// AccountResult.Discrimination): the smaller, the more evenly every
	// account got what it was due.
	DiscriminationVariance float64
	// Fawkes reports the FAWKES weighting of a fawkes replay; nil for other
	// policies.
	Fawkes *FawkesReport

	jobAccount []int // each job's account, for comparisons by account
}

// AccountResult is one account's outcome.
type AccountResult struct {
	Name   string
	Weight float64
	// ContributionShare is w_i/Σw; UsageShare is the account's share of all
	// usage, each resource normalized by the cluster's capacity of it.
	ContributionShare, UsageShare float64
	// Usage is the resource-seconds the account used over the whole replay,
	// whatever the window.
	Usage ledger.Vector
	// FinalUsage and FinalBaseline are Ü and ∫baseline under the window at
	// End, and FinalBeta the sharing degree β they give (+Inf when the
	// account never had a baseline). MinBeta is the least β sampled after
	// the first tenth of the account's time in the run, from its first
	// arrival to the end (before that a newcomer waits for running tasks to
	// end, under any policy).
	FinalUsage, FinalBaseline ledger.Vector
	FinalBeta, MinBeta        float64
	// TasksRun counts tasks started.
	TasksRun int
	// Jobs counts user-visible jobs completed (a map and its reduce are one
	// job); Unfinished those submitted but not completed.
	Jobs, Unfinished int
	// MeanWait is from submission to the first task's start; MeanCompletion
	// from submission to the last task's end; MeanSlowdown is completion
	// over the job's time alone on an empty cluster (at least 10 s), the
	// usual bounded slowdown.
	MeanWait, MeanCompletion time.Duration
	MeanSlowdown             float64
	// Discrimination is FAWKES's D_i = ∫(c_i − w_i) dt over the time the
	// account had work, in share·seconds: c_i the fraction of the cluster
	// it held (the mean of its shares of each resource), w_i the fraction
	// it was due (its weight over the weights of the accounts with work
	// then; under fawkes the share FAWKES gave it). Positive: it got more
	// than its due.
	Discrimination float64
}

// Samples are β per account at sampled times.
type Samples struct {
	Times []ledger.Time
	// Beta[i][k] is account i's β at Times[k] (+Inf before it has a
	// baseline).
	Beta [][]float64
}

// SlotResult is one slot of a slotted replay.
type SlotResult struct {
	Slot int
	// Running counts the tasks each account started in the slot.
	Running []int
	// Beta and Aggregate are each account's β and Σ_j Ü_ij at the slot's end.
	Beta, Aggregate []float64
}

// Unschedulable is a job that can never run, and why.
type Unschedulable struct {
	Job     int // index into Workload.Jobs
	ID      uint64
	Account string
	Tasks   int
	Reason  string
}

// TraceKind says what a TraceEvent reports.
type TraceKind int

// Trace event kinds.
const (
	// Arrive: job Job was submitted (Tasks is its task count).
	Arrive TraceKind = iota
	// Start: Tasks tasks of job Job started on node Node.
	Start
	// End: Tasks tasks of job Job ended on node Node.
	End
	// Settled: everything at Time has been applied and scheduled.
	Settled
)

// TraceEvent is one step of a replay, for tests and detailed analysis.
type TraceEvent struct {
	Kind TraceKind
	Time ledger.Time
	Job  int
	Node int
	// Nodes are all the nodes of a parallel task (Node is its head, Tasks
	// 1); nil for one-node tasks. The slice is the event's own.
	Nodes []int
	Tasks int
}

// Equal reports whether e and f report the same step.
func (e TraceEvent) Equal(f TraceEvent) bool {
	return e.Kind == f.Kind && e.Time == f.Time && e.Job == f.Job && e.Node == f.Node &&
		e.Tasks == f.Tasks && slices.Equal(e.Nodes, f.Nodes)
}
