package fsm

import (
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// The records below are what the FSM stores in bbolt, JSON-encoded. Their
// encoding is deterministic (struct fields in order, no maps), which is what
// keeps the bbolt contents of two replicas byte-identical. Vectors are
// indexed by the cluster's resource list at the time they were written;
// since resources are only ever appended, a shorter vector is padded with
// zeros when read.

// settingsRecord is the cluster settings.
type settingsRecord struct {
	Resources []string       `json:"resources"`
	Policy    sched.Policy   `json:"policy"`
	Window    string         `json:"window"`
	Timeout   *time.Duration `json:"timeout,omitempty"` // nil: the window's default
	Placement place.Strategy `json:"placement"`
	Quantum   time.Duration  `json:"quantum"`
	// LTRFResource names the resource ltrf is fair on.
	LTRFResource   string                `json:"ltrf_resource"`
	BillingWeights ledger.BillingWeights `json:"billing_weights"`
	// BillingRule is how the weighted resources make a task's rate. A
	// record written before rules existed has none, which reads as
	// BillingSum, the rule that cluster was billing under (loadState).
	BillingRule ledger.BillingRule `json:"billing_rule"`
	// QKnoblerRho is qknobler's ρ; nil means DefaultQKnoblerRho.
	QKnoblerRho *float64 `json:"qknobler_rho,omitempty"`
	// Fawkes is FAWKES weighting's configuration; nil means its defaults.
	Fawkes *fawkesRecord `json:"fawkes,omitempty"`
}

// DefaultResources is the resource list of a new cluster.
var defaultResources = []string{"cpu", "mem", "mic"}

// defaultBillingWeights price a reference node of 16 cores, 64 GiB and 2
// MICs at 16 SU per hour whichever of its resources a task takes: 1 SU per
// core-hour, 0.25 SU per GiB-hour (Slurm's example TRESBillingWeights
// "CPU=1.0,Mem=0.25G"), 8 SU per MIC-hour. Under the default max rule a
// CPU-only task costs its cores, as it always did, and a memory-only or
// MIC-only task pays for the share of such a node it takes.
var defaultBillingWeights = ledger.BillingWeights{1, 0.25 / (1 << 30), 8}

// defaultSettings are a new cluster's settings: H-MRF with no window, a
// one-minute quantum, affinity placement, and billing by the largest
// weighted resource (defaultBillingWeights).
func defaultSettings() settingsRecord {
	d := sched.DefaultSettings()
	return settingsRecord{
		Resources:      append([]string(nil), defaultResources...),
		Policy:         d.Policy,
		Window:         ledger.Window{Kind: ledger.WindowNone}.String(),
		Placement:      d.Placement,
		Quantum:        d.Quantum,
		LTRFResource:   defaultResources[0],
		BillingWeights: defaultBillingWeights.Clone(),
		BillingRule:    ledger.BillingMax,
	}
}

type accountRecord struct {
	Name         string      `json:"name"`
	AdminWeight  *float64    `json:"admin_weight,omitempty"`
	Contribution *float64    `json:"contribution,omitempty"`
	CreatedAt    ledger.Time `json:"created_at"`
	// Group is the account's parent in the account tree; empty is the
	// root (apply_groups.go).
	Group string `json:"group,omitempty"`
}

type userRecord struct {
	Name      string      `json:"name"`
	Accounts  []string    `json:"accounts"` // sorted
	CreatedAt ledger.Time `json:"created_at"`
}

type grantRecord struct {
	ID        string      `json:"id"`
	Account   string      `json:"account"`
	Amount    ledger.SU   `json:"amount"`
	Expires   ledger.Time `json:"expires,omitempty"`
	GrantedAt ledger.Time `json:"granted_at"`
	Note      string      `json:"note,omitempty"`
}

// JobState is where a job is in its life.
type JobState string

// Job states.
const (
	JobPending   JobState = "pending"
	JobRunning   JobState = "running"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
)

// Ended reports whether the job is over: every task has ended or was cancelled.
func (s JobState) Ended() bool {
	return s == JobSucceeded || s == JobFailed || s == JobCancelled
}

// TaskState is where a task attempt is in its life.
type TaskState string

// Task attempt states.
const (
	TaskAssigned  TaskState = "assigned"
	TaskRunning   TaskState = "running"
	TaskSucceeded TaskState = "succeeded"
	TaskFailed    TaskState = "failed"
	TaskLostState TaskState = "lost"
)

// active reports whether the attempt still holds its node's resources.
func (s TaskState) active() bool { return s == TaskAssigned || s == TaskRunning }

// requeuedTask is a task waiting for another attempt after it was lost.
type requeuedTask struct {
	Task    int64 `json:"task"`
	Attempt int   `json:"attempt"` // the attempt it will run as
}

// jobRecord is a job array. Pending tasks are not stored one by one: tasks
// [NextFresh, Tasks) have never been placed, and Requeued lists lost tasks
// waiting for another attempt, so a million-task array is one record.
type jobRecord struct {
	ID          uint64         `json:"id"`
	RequestID   string         `json:"request_id,omitempty"`
	Account     string         `json:"account"`
	User        string         `json:"user"`
	Name        string         `json:"name,omitempty"`
	Demand      ledger.Vector  `json:"demand"`
	Tasks       int64          `json:"tasks"`
	Walltime    time.Duration  `json:"walltime"`
	Command     []string       `json:"command"`
	MaxAttempts int            `json:"max_attempts"`
	SubmittedAt ledger.Time    `json:"submitted_at"`
	EndedAt     ledger.Time    `json:"ended_at,omitempty"`
	State       JobState       `json:"state"`
	CancelledAt ledger.Time    `json:"cancelled_at,omitempty"`
	NextFresh   int64          `json:"next_fresh"`
	Requeued    []requeuedTask `json:"requeued,omitempty"`
	Running     int64          `json:"running"`
	Succeeded   int64          `json:"succeeded"`
	Failed      int64          `json:"failed"`
	Cancelled   int64          `json:"cancelled"`
	Hold        ledger.SU      `json:"hold"`
	Charged     ledger.SU      `json:"charged"`
}

// pending is how many tasks wait to be placed.
func (j *jobRecord) pending() int64 {
	return j.Tasks - j.NextFresh + int64(len(j.Requeued))
}

// attemptRecord is one attempt of one task: written when the task is
// placed, updated when it starts and when it ends.
type attemptRecord struct {
	Job        uint64        `json:"job"`
	Task       int64         `json:"task"`
	Attempt    int           `json:"attempt"`
	Account    string        `json:"account"`
	User       string        `json:"user"`
	Node       string        `json:"node"`
	Demand     ledger.Vector `json:"demand"`
	State      TaskState     `json:"state"`
	AssignedAt ledger.Time   `json:"assigned_at"`
	// CountedFrom is when the fairness book started counting the attempt:
	// its placement, or the last change of fairness window.
	CountedFrom ledger.Time   `json:"counted_from"`
	StartedAt   ledger.Time   `json:"started_at,omitempty"`
	EndedAt     ledger.Time   `json:"ended_at,omitempty"`
	ExitCode    int32         `json:"exit_code,omitempty"`
	Runtime     time.Duration `json:"runtime,omitempty"`
	Charged     ledger.SU     `json:"charged,omitempty"`
}

type nodeRecord struct {
	ID       string        `json:"id"`
	Up       bool          `json:"up"`
	Capacity ledger.Vector `json:"capacity"`
	Class    string        `json:"class,omitempty"`
	Account  string        `json:"account,omitempty"`
	Address  string        `json:"address,omitempty"`
	Since    ledger.Time   `json:"since"`
}
