package fsm

import (
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// Limits on command contents. Beyond them a command is refused as malformed.
const (
	MaxTasksPerJob     = 1_000_000
	MaxAttemptsLimit   = 100
	DefaultMaxAttempts = 3
	MaxWalltime        = 365 * 24 * time.Hour
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
	AddResources   []string           `json:"add_resources,omitempty"`
}

// SubmitJob submits an array of Tasks identical tasks. RequestID, when set,
// makes the submission idempotent: a second SubmitJob with the same id
// returns the first job and holds nothing more.
type SubmitJob struct {
	RequestID   string             `json:"request_id,omitempty"`
	Account     string             `json:"account"`
	User        string             `json:"user"`
	Name        string             `json:"name,omitempty"`
	Demand      map[string]float64 `json:"demand"`
	Tasks       int64              `json:"tasks"`
	Walltime    time.Duration      `json:"walltime"`
	Command     []string           `json:"command"`
	MaxAttempts int                `json:"max_attempts,omitempty"`
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
// [0, walltime] and is what the task is charged for.
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
	ID       string             `json:"id"`
	Capacity map[string]float64 `json:"capacity"`
	Class    string             `json:"class,omitempty"`
	Account  string             `json:"account,omitempty"`
	Address  string             `json:"address,omitempty"`
}

// NodeDown declares a node down: its running tasks are lost, charged up to
// now, and requeued while they have attempts left.
type NodeDown struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
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

func (c *CreateAccount) validate() *Error {
	if err := checkName("account name", c.Name); err != nil {
		return err
	}
	if c.Weight != nil {
		if err := checkQuantity("weight", *c.Weight); err != nil {
			return err
		}
	}
	if c.Contribution != nil {
		return checkQuantity("contribution", *c.Contribution)
	}
	return nil
}

func (c *UpdateAccount) validate() *Error {
	if err := checkName("account name", c.Name); err != nil {
		return err
	}
	if c.Weight != nil && c.ClearWeight {
		return invalid("weight is both set and cleared: do one or the other")
	}
	if c.Contribution != nil && c.ClearContribution {
		return invalid("contribution is both set and cleared: do one or the other")
	}
	if c.Weight == nil && c.Contribution == nil && !c.ClearWeight && !c.ClearContribution {
		return invalid("nothing to update: set or clear the weight or the contribution")
	}
	if c.Weight != nil {
		if err := checkQuantity("weight", *c.Weight); err != nil {
			return err
		}
	}
	if c.Contribution != nil {
		return checkQuantity("contribution", *c.Contribution)
	}
	return nil
}

func (c *CreateUser) validate() *Error {
	if err := checkName("user name", c.Name); err != nil {
		return err
	}
	if len(c.Accounts) > MaxMemberships {
		return invalid("%d accounts given: a user can be a member of at most %d", len(c.Accounts), MaxMemberships)
	}
	seen := make(map[string]bool, len(c.Accounts))
	for _, a := range c.Accounts {
		if err := checkName("account name", a); err != nil {
			return err
		}
		if seen[a] {
			return invalid("account %q is listed twice: list each account once", a)
		}
		seen[a] = true
	}
	return nil
}

func (c *AddMembership) validate() *Error    { return checkMembership(c.User, c.Account) }
func (c *RemoveMembership) validate() *Error { return checkMembership(c.User, c.Account) }

func checkMembership(user, account string) *Error {
	if err := checkName("user name", user); err != nil {
		return err
	}
	return checkName("account name", account)
}

func (c *Grant) validate() *Error {
	if c.ID != "" {
		if err := checkName("grant id", c.ID); err != nil {
			return err
		}
	}
	if err := checkName("account name", c.Account); err != nil {
		return err
	}
	if c.Amount <= 0 {
		return invalid("grant amount %v SU must be positive", c.Amount)
	}
	if c.Expires < 0 {
		return invalid("grant expiry %d is before 1970: leave it unset for a grant that never expires", c.Expires)
	}
	return checkText("grant note", c.Note, MaxNoteBytes)
}

func (c *UpdateSettings) validate() *Error {
	if c.Policy == nil && c.Window == nil && c.Timeout == nil && c.Placement == nil && c.Quantum == nil &&
		c.LTRFResource == nil && len(c.BillingWeights) == 0 && len(c.AddResources) == 0 {
		return invalid("nothing to update: set at least one setting")
	}
	if c.Policy != nil {
		if _, err := sched.ParsePolicy(*c.Policy); err != nil {
			return invalid("policy: %v", err)
		}
	}
	if c.Window != nil {
		if _, err := ledger.ParseWindow(*c.Window); err != nil {
			return invalid("window: %v", err)
		}
	}
	if c.Placement != nil {
		if _, err := place.ParseStrategy(*c.Placement); err != nil {
			return invalid("placement: %v", err)
		}
	}
	if c.Timeout != nil && *c.Timeout < 0 {
		return invalid("time-out %v is negative: give 0 to disable it or a positive duration", *c.Timeout)
	}
	if c.Quantum != nil && *c.Quantum <= 0 {
		return invalid("quantum %v must be positive, e.g. 1m", *c.Quantum)
	}
	if c.LTRFResource != nil {
		if err := checkName("ltrf resource", *c.LTRFResource); err != nil {
			return err
		}
	}
	if err := checkQuantities("billing weight", c.BillingWeights); err != nil {
		return err
	}
	if len(c.AddResources) > MaxResources {
		return invalid("%d resources to add: a cluster has at most %d", len(c.AddResources), MaxResources)
	}
	seen := make(map[string]bool, len(c.AddResources))
	for _, r := range c.AddResources {
		if err := checkName("resource name", r); err != nil {
			return err
		}
		if seen[r] {
			return invalid("resource %q is listed twice: list each new resource once", r)
		}
		seen[r] = true
	}
	return nil
}

func (c *SubmitJob) validate() *Error {
	if c.RequestID != "" {
		if err := checkName("request id", c.RequestID); err != nil {
			return err
		}
	}
	if err := checkName("account name", c.Account); err != nil {
		return err
	}
	if err := checkName("user name", c.User); err != nil {
		return err
	}
	if err := checkText("job name", c.Name, MaxJobNameBytes); err != nil {
		return err
	}
	if len(c.Demand) == 0 {
		return invalid("demand is empty: give each task's resources, e.g. cpu=1")
	}
	if len(c.Demand) > MaxResources {
		return invalid("demand names %d resources: a cluster has at most %d", len(c.Demand), MaxResources)
	}
	if err := checkQuantities("demand", c.Demand); err != nil {
		return err
	}
	positive := false
	for _, x := range c.Demand {
		positive = positive || x > 0
	}
	if !positive {
		return invalid("demand is zero in every resource: a task must hold something, e.g. cpu=1")
	}
	if c.Tasks < 1 || c.Tasks > MaxTasksPerJob {
		return invalid("tasks is %d: a job has 1 to %d tasks", c.Tasks, MaxTasksPerJob)
	}
	if c.Walltime <= 0 || c.Walltime > MaxWalltime {
		return invalid("walltime %v must be positive and at most %v", c.Walltime, MaxWalltime)
	}
	if len(c.Command) == 0 {
		return invalid("command is empty: give the program to run and its arguments")
	}
	if len(c.Command) > MaxCommandArgs {
		return invalid("command has %d arguments: at most %d", len(c.Command), MaxCommandArgs)
	}
	size := 0
	for i, arg := range c.Command {
		size += len(arg)
		if err := checkText("command argument", arg, MaxCommandArgBytes); err != nil {
			return err
		}
		if i == 0 && arg == "" {
			return invalid("command starts with an empty program name: give the program to run")
		}
	}
	if size > MaxCommandArgBytes {
		return invalid("command is %d bytes long: at most %d; put long inputs in a file", size, MaxCommandArgBytes)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > MaxAttemptsLimit {
		return invalid("max attempts %d must be between 1 and %d (0 means %d)", c.MaxAttempts, MaxAttemptsLimit, DefaultMaxAttempts)
	}
	return nil
}

func (c *CancelJob) validate() *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	return nil
}

func (c *Assign) validate() *Error {
	if len(c.Placements) == 0 || len(c.Placements) > MaxBatch {
		return invalid("assign has %d placements: send 1 to %d", len(c.Placements), MaxBatch)
	}
	for i, p := range c.Placements {
		if p.JobID == 0 || p.Task < 0 || p.Task >= MaxTasksPerJob {
			return invalid("placement %d names task %d of job %d: no such task can exist", i, p.Task, p.JobID)
		}
		if err := checkNodeID("placement node", p.Node); err != nil {
			return err
		}
	}
	return nil
}

func (c *TaskEvents) validate() *Error {
	if len(c.Events) == 0 || len(c.Events) > MaxBatch {
		return invalid("task-events has %d events: send 1 to %d", len(c.Events), MaxBatch)
	}
	for i, e := range c.Events {
		if e.JobID == 0 || e.Task < 0 || e.Task >= MaxTasksPerJob || e.Attempt < 1 || e.Attempt > MaxAttemptsLimit {
			return invalid("event %d names attempt %d of task %d of job %d: no such attempt can exist", i, e.Attempt, e.Task, e.JobID)
		}
		switch e.Kind {
		case TaskStarted, TaskExited, TaskLost:
		default:
			return invalid("event %d has kind %q: want started, exited or lost", i, e.Kind)
		}
	}
	return nil
}

func (c *NodeUp) validate() *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	if len(c.Capacity) > MaxResources {
		return invalid("node capacity names %d resources: a cluster has at most %d", len(c.Capacity), MaxResources)
	}
	if err := checkQuantities("capacity", c.Capacity); err != nil {
		return err
	}
	if err := checkText("node class", c.Class, maxNameLength); err != nil {
		return err
	}
	if c.Account != "" {
		if err := checkName("contributing account", c.Account); err != nil {
			return err
		}
	}
	return checkText("node address", c.Address, maxNodeIDLength)
}

func (c *NodeDown) validate() *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	return checkText("reason", c.Reason, MaxNoteBytes)
}
