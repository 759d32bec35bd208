package fsm

import (
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// The *Info types are what the read methods and command results return:
// copies that share nothing with the FSM, with resource vectors as maps
// from resource name to quantity.

// AccountInfo is an account.
type AccountInfo struct {
	Name string
	// Weight is the effective weight w_i the policies use; WeightSource
	// says where it comes from.
	Weight       float64
	WeightSource WeightSource
	AdminWeight  *float64
	Contribution *float64
	// Contributed is the capacity of the up nodes the account contributed.
	Contributed map[string]float64
	CreatedAt   ledger.Time
	// Group is the account's parent in the account tree ("" for the root).
	Group string
}

// UserInfo is a user and its memberships (sorted).
type UserInfo struct {
	Name      string
	Accounts  []string
	CreatedAt ledger.Time
}

// GrantInfo is a grant of SUs.
type GrantInfo struct {
	ID        string
	Account   string
	Amount    ledger.SU
	Expires   ledger.Time // 0: never
	GrantedAt ledger.Time
	Note      string
}

// SettingsInfo is the cluster settings.
type SettingsInfo struct {
	Policy sched.Policy
	Window ledger.Window
	// Timeout is the starvation time-out in force; TimeoutIsDefault reports
	// that it is the window's default because none was set.
	Timeout          time.Duration
	TimeoutIsDefault bool
	Placement        place.Strategy
	Quantum          time.Duration
	LTRFResource     string
	// BillingWeights are SU per hour per unit of each resource.
	BillingWeights map[string]float64
	// BillingRule is how the weighted resources make a task's rate.
	BillingRule ledger.BillingRule
	// Resources is the cluster's resource list, in vector order.
	Resources []string
	// Sched is the same settings as the policy engine takes them.
	Sched sched.Settings
}

// JobInfo is a job array.
type JobInfo struct {
	ID          uint64
	RequestID   string
	Account     string
	User        string
	Name        string
	Demand      map[string]float64
	Tasks       int64
	Walltime    time.Duration
	Command     []string
	MaxAttempts int
	State       JobState
	SubmittedAt ledger.Time
	EndedAt     ledger.Time // 0 while the job runs
	CancelledAt ledger.Time // 0 unless cancelled
	// Task counts; they add up to Tasks.
	Pending, Running, Succeeded, Failed, Cancelled int64
	// Hold is the SU hold placed at submission, Charged what the job's
	// attempts were charged so far.
	Hold, Charged ledger.SU
}

// TaskInfo is one attempt of one task.
type TaskInfo struct {
	JobID      uint64
	Task       int64
	Attempt    int
	State      TaskState
	Node       string
	AssignedAt ledger.Time
	StartedAt  ledger.Time
	EndedAt    ledger.Time
	ExitCode   int32
	Runtime    time.Duration
	Charged    ledger.SU
}

// NodeInfo is a worker node.
type NodeInfo struct {
	ID       string
	Up       bool
	Class    string
	Account  string
	Address  string
	Capacity map[string]float64
	Free     map[string]float64
	Running  int
	// Since is when the node last came up or went down.
	Since ledger.Time
}

// named turns a vector into a map over the cluster's resources.
func (s *state) named(v ledger.Vector) map[string]float64 { return named(s.settings.Resources, v) }

func named(resources []string, v ledger.Vector) map[string]float64 {
	m := make(map[string]float64, len(resources))
	for k, name := range resources {
		if k < len(v) {
			m[name] = v[k]
		} else {
			m[name] = 0
		}
	}
	return m
}

func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (s *state) accountInfo(a *accountRecord) AccountInfo {
	return AccountInfo{
		Name: a.Name, Weight: s.weights[a.Name], WeightSource: s.weightFrom[a.Name],
		AdminWeight: clonePtr(a.AdminWeight), Contribution: clonePtr(a.Contribution),
		Contributed: s.named(s.contributedBy(a.Name)), CreatedAt: a.CreatedAt, Group: a.Group,
	}
}

func userInfo(u *userRecord) UserInfo {
	return UserInfo{Name: u.Name, Accounts: slices.Clone(u.Accounts), CreatedAt: u.CreatedAt}
}

func grantInfo(g *grantRecord) GrantInfo {
	return GrantInfo{ID: g.ID, Account: g.Account, Amount: g.Amount, Expires: g.Expires, GrantedAt: g.GrantedAt, Note: g.Note}
}

func (s *state) settingsInfo() SettingsInfo {
	ss := schedSettings(&s.settings, s.window)
	return SettingsInfo{
		Policy: s.settings.Policy, Window: s.window, Timeout: ss.Timeout, TimeoutIsDefault: s.settings.Timeout == nil,
		Placement: s.settings.Placement, Quantum: s.settings.Quantum, LTRFResource: s.settings.LTRFResource,
		BillingWeights: s.named(ledger.Vector(s.settings.BillingWeights)), BillingRule: s.settings.BillingRule,
		Resources: slices.Clone(s.settings.Resources), Sched: ss,
	}
}

func (s *state) jobInfo(j *jobRecord) JobInfo { return jobInfo(j, s.settings.Resources) }

func jobInfo(j *jobRecord, resources []string) JobInfo {
	return JobInfo{
		ID: j.ID, RequestID: j.RequestID, Account: j.Account, User: j.User, Name: j.Name,
		Demand: named(resources, j.Demand), Tasks: j.Tasks, Walltime: j.Walltime, Command: slices.Clone(j.Command),
		MaxAttempts: j.MaxAttempts, State: j.State, SubmittedAt: j.SubmittedAt, EndedAt: j.EndedAt, CancelledAt: j.CancelledAt,
		Pending: j.pending(), Running: j.Running, Succeeded: j.Succeeded, Failed: j.Failed, Cancelled: j.Cancelled,
		Hold: j.Hold, Charged: j.Charged,
	}
}

func taskInfo(a *attemptRecord) TaskInfo {
	return TaskInfo{
		JobID: a.Job, Task: a.Task, Attempt: a.Attempt, State: a.State, Node: a.Node,
		AssignedAt: a.AssignedAt, StartedAt: a.StartedAt, EndedAt: a.EndedAt,
		ExitCode: a.ExitCode, Runtime: a.Runtime, Charged: a.Charged,
	}
}

func (s *state) nodeInfo(nd *nodeState) NodeInfo {
	free := nd.free.Clone()
	for k := range free {
		free[k] = max(free[k], 0)
	}
	return NodeInfo{
		ID: nd.rec.ID, Up: nd.rec.Up, Class: nd.rec.Class, Account: nd.rec.Account, Address: nd.rec.Address,
		Capacity: s.named(nd.rec.Capacity), Free: s.named(free), Running: len(nd.tasks), Since: nd.rec.Since,
	}
}

// formatTime writes a ledger time for messages.
func formatTime(t ledger.Time) string {
	return time.Unix(0, int64(t)).UTC().Format(time.RFC3339Nano)
}
