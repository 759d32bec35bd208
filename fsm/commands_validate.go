package fsm

import (
	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// The validate methods check a command's shape: what can be checked without
// the cluster state, by the rules of the entry's version (see rules). Encode runs them so a leader never proposes an entry
// every server would refuse; Decode runs them so every server refuses a
// malformed entry the same way. Checks against the state happen at apply.

func (c *CreateAccount) validate(r rules) *Error {
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

func (c *UpdateAccount) validate(r rules) *Error {
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

func (c *CreateUser) validate(r rules) *Error {
	if err := checkName("user name", c.Name); err != nil {
		return err
	}
	if len(c.Accounts) > MaxMemberships {
		return invalid("%d accounts given: a user can be a member of at most %d", len(c.Accounts), MaxMemberships)
	}
	return checkDistinctNames("account", c.Accounts)
}

func (c *AddMembership) validate(r rules) *Error    { return checkMembership(c.User, c.Account) }
func (c *RemoveMembership) validate(r rules) *Error { return checkMembership(c.User, c.Account) }

func checkMembership(user, account string) *Error {
	if err := checkName("user name", user); err != nil {
		return err
	}
	return checkName("account name", account)
}

func (c *Grant) validate(r rules) *Error {
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
	return r.text("grant note", c.Note, MaxNoteBytes)
}

func (c *UpdateSettings) validate(r rules) *Error {
	if c.Policy == nil && c.Window == nil && c.Timeout == nil && c.Placement == nil && c.Quantum == nil &&
		c.LTRFResource == nil && len(c.BillingWeights) == 0 && c.BillingRule == nil && len(c.AddResources) == 0 &&
		c.QKnoblerRho == nil && c.Fawkes.empty() {
		return invalid("nothing to update: set at least one setting")
	}
	if c.QKnoblerRho != nil {
		if err := invalidIf(core.CheckRho("qknobler knob ρ", *c.QKnoblerRho)); err != nil {
			return err
		}
	}
	if !c.Fawkes.empty() {
		if err := c.Fawkes.validate(r); err != nil {
			return err
		}
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
	if c.Quantum != nil {
		if err := invalidIf(core.CheckQuantum(*c.Quantum)); err != nil {
			return err
		}
	}
	if c.LTRFResource != nil {
		if err := checkName("ltrf resource", *c.LTRFResource); err != nil {
			return err
		}
	}
	if err := checkQuantities("billing weight", c.BillingWeights); err != nil {
		return err
	}
	if c.BillingRule != nil {
		if _, err := ledger.ParseBillingRule(*c.BillingRule); err != nil {
			return invalid("%v", err)
		}
	}
	if len(c.AddResources) > MaxResources {
		return invalid("%d resources to add: a cluster has at most %d", len(c.AddResources), MaxResources)
	}
	return checkDistinctNames("resource", c.AddResources)
}

// checkDistinctNames checks each name of a list of kind (account,
// resource) and that none is listed twice.
func checkDistinctNames(kind string, names []string) *Error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := checkName(kind+" name", n); err != nil {
			return err
		}
		if seen[n] {
			return invalid("%s %q is listed twice: list each %s once", kind, n, kind)
		}
		seen[n] = true
	}
	return nil
}

func (c *SubmitJob) validate(r rules) *Error {
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
	if err := r.text("job name", c.Name, MaxJobNameBytes); err != nil {
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
	// Units follow the resource's name, so a demand below one unit (1e-6
	// of a core, 4 bytes of memory) is refused here, before it is logged;
	// apply rounds the rest up to whole units (state.demandVector). Entries
	// of the versions before (r.strict() false) are held to their own rules.
	for _, name := range sortedKeys(c.Demand) {
		if !r.strict() {
			break
		}
		if _, err := ledger.ResourceUnit(name).RoundUp("demand["+name+"]", c.Demand[name]); err != nil {
			return invalid("%v", err)
		}
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
	if c.Walltime < r.minWalltime() || c.Walltime > MaxWalltime {
		return invalid("walltime %v must be at least %v and at most %v", c.Walltime, r.minWalltime(), MaxWalltime)
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
		if err := r.commandText("command argument", arg, MaxCommandArgBytes); err != nil {
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

func (c *CancelJob) validate(r rules) *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	return nil
}

func (c *Assign) validate(r rules) *Error {
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

func (c *TaskEvents) validate(r rules) *Error {
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

func (c *NodeUp) validate(r rules) *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	if len(c.Capacity) > MaxResources {
		return invalid("node capacity names %d resources: a cluster has at most %d", len(c.Capacity), MaxResources)
	}
	if err := checkQuantities("capacity", c.Capacity); err != nil {
		return err
	}
	if err := r.text("node class", c.Class, maxNameLength); err != nil {
		return err
	}
	if c.Account != "" {
		if err := checkName("contributing account", c.Account); err != nil {
			return err
		}
	}
	return r.text("node address", c.Address, maxNodeIDLength)
}

func (c *NodeDown) validate(r rules) *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	if c.FailedAt < 0 {
		return invalid("node-down failed_at is %d: give a time after 1970, or none", c.FailedAt)
	}
	return r.text("reason", c.Reason, MaxNoteBytes)
}
