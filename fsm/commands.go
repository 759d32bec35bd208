package fsm

import (
	"time"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
)

// Limits on command contents. Beyond them a command is refused as malformed.
const (
	MaxTasksPerJob     = 1_000_000
	MaxAttemptsLimit   = 100
	DefaultMaxAttempts = 3
	MaxWalltime        = core.MaxWalltime
	MaxCommandArgs     = 1024
	MaxCommandArgBytes = 64 << 10
	MaxJobNameBytes    = 256
	MaxNoteBytes       = 1024
	MaxBatch           = 100_000
	MaxMemberships     = 1000
	MaxResources       = 64
)

// CreateAccount adds an account. Weight and Contribution are optional; see
// AccountInfo for how the effective weight is chosen.
type CreateAccount struct {
	Name         string   `json:"name"`
	Weight       *float64 `json:"weight,omitempty"`
	Contribution *float64 `json:"contribution,omitempty"`
}

// UpdateAccount sets or clears an account's admin weight and contribution.
type UpdateAccount struct {
	Name              string   `json:"name"`
	Weight            *float64 `json:"weight,omitempty"`
	Contribution      *float64 `json:"contribution,omitempty"`
	ClearWeight       bool     `json:"clear_weight,omitempty"`
	ClearContribution bool     `json:"clear_contribution,omitempty"`
}

// CreateUser adds a user and makes it a member of Accounts.
type CreateUser struct {
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
}

// AddMembership makes User a member of Account; a no-op when it already is.
type AddMembership struct {
	User    string `json:"user"`
	Account string `json:"account"`
}

// RemoveMembership ends User's membership of Account; a no-op when it is not one.
type RemoveMembership struct {
	User    string `json:"user"`
	Account string `json:"account"`
}

// Grant credits Amount to Account. ID makes it idempotent; an empty ID gets
// one assigned by the FSM ("g-<n>"). Expires (0: never) is when the unused
// remainder stops covering new holds.
type Grant struct {
	ID      string      `json:"id,omitempty"`
	Account string      `json:"account"`
	Amount  ledger.SU   `json:"amount"`
	Expires ledger.Time `json:"expires,omitempty"`
	Note    string      `json:"note,omitempty"`
}

// UpdateSettings changes the cluster settings that are set (nil fields are
// left alone). BillingWeights, when not empty, replaces all billing weights
// (resources left out cost nothing). AddResources appends resource names to
// the cluster's resource list; resources are never removed or reordered,
// because every stored vector is indexed by that list.
type UpdateSettings struct {
	Policy         *string            `json:"policy,omitempty"`
	Window         *string            `json:"window,omitempty"`
	Timeout        *time.Duration     `json:"timeout,omitempty"`
	Placement      *string            `json:"placement,omitempty"`
	Quantum        *time.Duration     `json:"quantum,omitempty"`
	LTRFResource   *string            `json:"ltrf_resource,omitempty"`
	BillingWeights map[string]float64 `json:"billing_weights,omitempty"`
	// BillingRule is "max" or "sum" (ledger.ParseBillingRule).
	BillingRule  *string  `json:"billing_rule,omitempty"`
	AddResources []string `json:"add_resources,omitempty"`
	// QKnoblerRho is qknobler's knob ρ in [0, 1]; Fawkes changes FAWKES
	// weighting's settings (apply_shares_settings.go).
	QKnoblerRho *float64      `json:"qknobler_rho,omitempty"`
	Fawkes      *FawkesUpdate `json:"fawkes,omitempty"`
}

// SubmitJob submits an array of Tasks identical tasks. RequestID, when set,
// makes the submission idempotent: a second SubmitJob with the same id
// returns the first job and holds nothing more.
//
// CheckFit refuses the job, holding nothing, when no known node — up or
// down — could hold one of its tasks even idle (apply_fit.go); with no node
// known yet there is nothing to judge and the job is accepted. Servers set
// it on every submission. Entries written before it existed lack it and
// apply as they did then, so a log replayed by a newer server rebuilds the
// state it built when it was first applied.
type SubmitJob struct {
	// legacy marks an entry of the version before whole units
	// (legacyVersion): it is applied as that release applied it, its
	// demand neither refused below one unit nor rounded, so replaying an
	// old log gives the state the old release gave.
	legacy bool

	RequestID   string             `json:"request_id,omitempty"`
	Account     string             `json:"account"`
	User        string             `json:"user"`
	Name        string             `json:"name,omitempty"`
	Demand      map[string]float64 `json:"demand"`
	Tasks       int64              `json:"tasks"`
	Walltime    time.Duration      `json:"walltime"`
	Command     []string           `json:"command"`
	MaxAttempts int                `json:"max_attempts,omitempty"`
	CheckFit    bool               `json:"check_fit,omitempty"`
}

// CancelJob cancels a job's pending tasks. Running tasks run until their
// worker reports them ended; the job is cancelled when the last one has.
type CancelJob struct {
	JobID uint64 `json:"job_id"`
}

// TaskPlacement places task Task of job JobID on node Node.
type TaskPlacement struct {
	JobID uint64 `json:"job"`
	Task  int64  `json:"task"`
	Node  string `json:"node"`
}

// Assign is one scheduling pass's placements. Each is re-checked at apply
// (node up, capacity free, task still pending); stale ones are dropped and
// reported in the AssignResult, the rest are applied.
type Assign struct {
	Placements []TaskPlacement `json:"placements"`
}

// TaskEventKind is what happened to a task attempt.
type TaskEventKind string

// Task events workers report.
const (
	TaskStarted TaskEventKind = "started"
	TaskExited  TaskEventKind = "exited"
	TaskLost    TaskEventKind = "lost"
)

// TaskEvent reports what happened to attempt Attempt of a task. ExitCode and
// Runtime are meaningful for TaskExited; the runtime is clamped to
// [0, walltime] and is what the task is charged for. A TaskLost with a
// Runtime is an attempt its worker fenced (killed after losing the
// leader): it is charged that runtime; without one, up to now.
type TaskEvent struct {
	JobID    uint64        `json:"job"`
	Task     int64         `json:"task"`
	Attempt  int           `json:"attempt"`
	Kind     TaskEventKind `json:"kind"`
	ExitCode int32         `json:"exit_code,omitempty"`
	Runtime  time.Duration `json:"runtime,omitempty"`
}

// TaskEvents is a batch of task events. Events that no longer match the
// task's current attempt (duplicates, late reports) are ignored and reported
// in the EventsResult, never applied twice.
type TaskEvents struct {
	Events []TaskEvent `json:"events"`
}

// NodeUp declares a node up with its capacity, or updates an up node.
// Account, when set, is the account that contributed the node.
type NodeUp struct {
	// legacy marks an entry of the version before whole units: its
	// capacity is kept as logged, not rounded down (see SubmitJob.legacy).
	legacy bool

	ID       string             `json:"id"`
	Capacity map[string]float64 `json:"capacity"`
	Class    string             `json:"class,omitempty"`
	Account  string             `json:"account,omitempty"`
	Address  string             `json:"address,omitempty"`
}

// NodeDown declares a node down: its running tasks are lost, charged up to
// now, and requeued while they have attempts left. FailedAt, when set and
// earlier, is when the node's attempts surely stopped running (the leader
// knows when its worker fenced them): the lost attempts are charged up to
// then, not for the time it took to notice the failure.
//
// With KeepAttempts the node only goes down: nothing new is placed there,
// and its running attempts stay active, since an unreachable worker may
// still run them until it fences them. A later NodeDown without
// KeepAttempts, on the node already down, loses them.
type NodeDown struct {
	ID           string      `json:"id"`
	Reason       string      `json:"reason,omitempty"`
	FailedAt     ledger.Time `json:"failed_at,omitempty"`
	KeepAttempts bool        `json:"keep_attempts,omitempty"`
}

func (*CreateAccount) Type() CommandType    { return TypeCreateAccount }
func (*UpdateAccount) Type() CommandType    { return TypeUpdateAccount }
func (*CreateUser) Type() CommandType       { return TypeCreateUser }
func (*AddMembership) Type() CommandType    { return TypeAddMembership }
func (*RemoveMembership) Type() CommandType { return TypeRemoveMembership }
func (*Grant) Type() CommandType            { return TypeGrant }
func (*UpdateSettings) Type() CommandType   { return TypeUpdateSettings }
func (*SubmitJob) Type() CommandType        { return TypeSubmitJob }
func (*CancelJob) Type() CommandType        { return TypeCancelJob }
func (*Assign) Type() CommandType           { return TypeAssign }
func (*TaskEvents) Type() CommandType       { return TypeTaskEvents }
func (*NodeUp) Type() CommandType           { return TypeNodeUp }
func (*NodeDown) Type() CommandType         { return TypeNodeDown }
