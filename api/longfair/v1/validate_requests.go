package longfairv1

import (
	"fmt"
	"strings"
	"time"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
)

// The Validate methods of every request type: what can be checked without
// the cluster state. Helpers and limits are in validate.go.

// Validate checks the request; see the message's field comments.
func (r *CreateAccountRequest) Validate() error {
	if err := checkName("name", r.GetName()); err != nil {
		return err
	}
	if r.Weight != nil {
		if err := checkQuantity("weight", r.GetWeight()); err != nil {
			return err
		}
	}
	if r.Contribution != nil {
		return checkQuantity("contribution", r.GetContribution())
	}
	return nil
}

// Validate checks the request.
func (r *GetAccountRequest) Validate() error { return checkName("name", r.GetName()) }

// Validate checks the request.
func (r *ListAccountsRequest) Validate() error { return checkPage(r.GetPageSize(), r.GetPageToken()) }

// Validate checks the request.
func (r *UpdateAccountRequest) Validate() error {
	if err := checkName("name", r.GetName()); err != nil {
		return err
	}
	if r.Weight != nil && r.GetClearWeight() {
		return bad("weight and clear_weight are both set: do one or the other")
	}
	if r.Contribution != nil && r.GetClearContribution() {
		return bad("contribution and clear_contribution are both set: do one or the other")
	}
	if r.Weight == nil && r.Contribution == nil && !r.GetClearWeight() && !r.GetClearContribution() {
		return bad("nothing to update: set or clear weight or contribution")
	}
	if r.Weight != nil {
		if err := checkQuantity("weight", r.GetWeight()); err != nil {
			return err
		}
	}
	if r.Contribution != nil {
		return checkQuantity("contribution", r.GetContribution())
	}
	return nil
}

// Validate checks the request.
func (r *CreateUserRequest) Validate() error {
	if err := checkName("name", r.GetName()); err != nil {
		return err
	}
	if len(r.GetAccounts()) > MaxMemberships {
		return bad("accounts lists %d accounts: a user can be a member of at most %d", len(r.GetAccounts()), MaxMemberships)
	}
	seen := make(map[string]bool, len(r.GetAccounts()))
	for _, a := range r.GetAccounts() {
		if err := checkName("accounts entry", a); err != nil {
			return err
		}
		if seen[a] {
			return bad("accounts lists %q twice: list each account once", a)
		}
		seen[a] = true
	}
	return nil
}

// Validate checks the request.
func (r *GetUserRequest) Validate() error { return checkName("name", r.GetName()) }

// Validate checks the request.
func (r *ListUsersRequest) Validate() error {
	if err := checkOptionalName("account", r.GetAccount()); err != nil {
		return err
	}
	return checkPage(r.GetPageSize(), r.GetPageToken())
}

// Validate checks the request.
func (r *MembershipRequest) Validate() error {
	if err := checkName("user", r.GetUser()); err != nil {
		return err
	}
	return checkName("account", r.GetAccount())
}

// Validate checks the request.
func (r *CreateGrantRequest) Validate() error {
	if err := checkOptionalName("id", r.GetId()); err != nil {
		return err
	}
	if err := checkName("account", r.GetAccount()); err != nil {
		return err
	}
	if r.GetAmountMicroSu() <= 0 {
		return bad("amount_micro_su is %d: a grant must be positive (1 SU = 1000000)", r.GetAmountMicroSu())
	}
	if err := checkTimestamp("expires_at", r.GetExpiresAt()); err != nil {
		return err
	}
	return checkText("note", r.GetNote(), MaxNoteBytes)
}

// Validate checks the request.
func (r *ListGrantsRequest) Validate() error {
	if err := checkOptionalName("account", r.GetAccount()); err != nil {
		return err
	}
	return checkPage(r.GetPageSize(), r.GetPageToken())
}

// Validate checks the request.
func (r *SubmitJobRequest) Validate() error {
	if err := checkName("account", r.GetAccount()); err != nil {
		return err
	}
	if err := checkName("user", r.GetUser()); err != nil {
		return err
	}
	if err := checkText("name", r.GetName(), MaxJobNameBytes); err != nil {
		return err
	}
	if err := checkOptionalName("request_id", r.GetRequestId()); err != nil {
		return err
	}
	if err := checkText("dependency", r.GetDependency(), MaxDependencyBytes); err != nil {
		return err
	}
	if err := checkTimestamp("begin", r.GetBegin()); err != nil {
		return err
	}
	if t := r.GetArrayThrottle(); t < 0 {
		return bad("array_throttle is %d: give how many of the job's tasks may run at once, or 0 for no limit", t)
	}
	if len(r.GetDemand()) == 0 {
		return bad("demand is empty: give each task's resources, e.g. cpu=1")
	}
	if err := checkDemand(r.GetDemand()); err != nil {
		return err
	}
	positive := false
	for _, x := range r.GetDemand() {
		positive = positive || x > 0
	}
	if !positive {
		return bad("demand is zero in every resource: a task must hold something, e.g. cpu=1")
	}
	if err := r.checkNotYetSupported(); err != nil {
		return err
	}
	if r.GetTasks() < 1 || r.GetTasks() > MaxTasksPerJob {
		return bad("tasks is %d: a job has 1 to %d tasks", r.GetTasks(), MaxTasksPerJob)
	}
	if n := r.GetNodes(); n < 0 || n > MaxNodesPerJob {
		return bad("nodes is %d: a task spans 1 to %d nodes (0 means 1)", n, MaxNodesPerJob)
	}
	if n := r.GetNtasks(); n < 0 || n > MaxTasksPerJob {
		return bad("ntasks is %d: a parallel task runs 1 to %d processes (0 means one per node)", n, MaxTasksPerJob)
	}
	if err := checkDuration("walltime", r.GetWalltime(), false, MaxWalltime); err != nil {
		return err
	}
	if w := r.GetWalltime().AsDuration(); w < MinWalltime {
		return bad("walltime is %v: give at least %v, e.g. 10m", w, MinWalltime)
	}
	if len(r.GetCommand()) == 0 {
		return bad("command is empty: give the program to run and its arguments")
	}
	if len(r.GetCommand()) > MaxCommandArgs {
		return bad("command has %d arguments: at most %d", len(r.GetCommand()), MaxCommandArgs)
	}
	if r.GetCommand()[0] == "" {
		return bad("command starts with an empty program name: give the program to run")
	}
	size := 0
	for i, arg := range r.GetCommand() {
		size += len(arg)
		// A shell script may span lines; nothing else that drives a
		// terminal may be in it.
		if err := invalidIf(core.CheckCommandText(fmt.Sprintf("command argument %d", i+1), arg, MaxCommandBytes)); err != nil {
			return err
		}
	}
	if size > MaxCommandBytes {
		return bad("command is %d bytes long: at most %d; put long inputs in a file", size, MaxCommandBytes)
	}
	if r.GetMaxAttempts() < 0 || r.GetMaxAttempts() > MaxAttemptsLimit {
		return bad("max_attempts is %d: give 1 to %d, or 0 for %d", r.GetMaxAttempts(), MaxAttemptsLimit, DefaultMaxAttempts)
	}
	return checkLaunch(r.GetDir(), r.GetEnv())
}

// Bounds on what a job captures (as package fsm has them).
const (
	maxDirBytes = 4096
	maxEnvVars  = 4096
	maxEnvBytes = 1 << 20
)

// checkLaunch checks a job's working directory (absolute, text) and
// environment (NAME=value, text that may span lines as exported shell
// functions do, within bounds).
func checkLaunch(dir string, env []string) error {
	if dir != "" {
		if err := checkText("dir", dir, maxDirBytes); err != nil {
			return err
		}
		if dir[0] != '/' {
			return bad("dir %q is not an absolute path: give one starting with /", dir)
		}
	}
	if len(env) > maxEnvVars {
		return bad("env has %d variables: at most %d", len(env), maxEnvVars)
	}
	size := 0
	for i, kv := range env {
		size += len(kv)
		if err := invalidIf(core.CheckCommandText(fmt.Sprintf("env entry %d", i+1), kv, maxEnvBytes)); err != nil {
			return err
		}
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return bad("env entry %d is not NAME=value", i+1)
		}
	}
	if size > maxEnvBytes {
		return bad("env is %d bytes: at most %d; export fewer variables", size, maxEnvBytes)
	}
	return nil
}

func checkJobID(id uint64) error {
	if id == 0 {
		return bad("job_id is 0: give the id SubmitJob returned")
	}
	return nil
}

// Validate checks the request.
func (r *CancelJobRequest) Validate() error { return checkJobID(r.GetJobId()) }

func (r *HoldJobRequest) Validate() error { return checkJobID(r.GetJobId()) }

func (r *ReleaseJobRequest) Validate() error { return checkJobID(r.GetJobId()) }

// Validate checks the request.
func (r *GetJobRequest) Validate() error { return checkJobID(r.GetJobId()) }

// Validate checks the request.
func (r *ExplainJobRequest) Validate() error { return checkJobID(r.GetJobId()) }

// Validate checks the request.
func (r *ListJobsRequest) Validate() error {
	if err := checkOptionalName("account", r.GetAccount()); err != nil {
		return err
	}
	if err := checkOptionalName("user", r.GetUser()); err != nil {
		return err
	}
	for _, s := range r.GetStates() {
		if _, ok := JobState_name[int32(s)]; !ok || s == JobState_JOB_STATE_UNSPECIFIED {
			return bad("states contains %d, which is not a job state: use PENDING, RUNNING, SUCCEEDED, FAILED or CANCELLED", int32(s))
		}
	}
	if err := checkWindow(r.GetSince(), r.GetUntil()); err != nil {
		return err
	}
	return checkPage(r.GetPageSize(), r.GetPageToken())
}

// MaxTaskListJobs bounds the jobs one ListTasks or ExplainJobs request
// names.
const MaxTaskListJobs = 1000

// Validate checks the request.
func (r *ListTasksRequest) Validate() error {
	switch {
	case len(r.GetJobIds()) == 0:
		if err := checkJobID(r.GetJobId()); err != nil {
			return err
		}
	case r.GetJobId() != 0:
		return bad("job_id %d and job_ids both given: give one job_id, or job_ids alone", r.GetJobId())
	default:
		if err := checkJobIDs(r.GetJobIds()); err != nil {
			return err
		}
	}
	return checkPage(r.GetPageSize(), r.GetPageToken())
}

// Validate checks the request.
func (r *ExplainJobsRequest) Validate() error {
	if len(r.GetJobIds()) == 0 {
		return bad("job_ids is empty: name the jobs to explain")
	}
	return checkJobIDs(r.GetJobIds())
}

// checkJobIDs checks a list of jobs: at most MaxTaskListJobs, each a job
// id, each once.
func checkJobIDs(ids []uint64) error {
	if len(ids) > MaxTaskListJobs {
		return bad("job_ids names %d jobs: ask for at most %d at a time", len(ids), MaxTaskListJobs)
	}
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		if id == 0 {
			return bad("job_ids holds 0: give the ids SubmitJob returned")
		}
		if seen[id] {
			return bad("job_ids names job %d twice: name each job once", id)
		}
		seen[id] = true
	}
	return nil
}

// Validate checks the request.
func (r *GetFairnessReportRequest) Validate() error {
	return checkOptionalName("account", r.GetAccount())
}

// MaxHistoryAccounts bounds the accounts one history request names.
const MaxHistoryAccounts = 1000

// Validate checks the request.
func (r *GetFairnessHistoryRequest) Validate() error {
	if len(r.GetAccounts()) > MaxHistoryAccounts {
		return bad("%d accounts named: ask for at most %d at a time, or for none (every account you may see)", len(r.GetAccounts()), MaxHistoryAccounts)
	}
	for _, a := range r.GetAccounts() {
		if err := checkName("accounts", a); err != nil {
			return err
		}
	}
	if err := checkWindow(r.GetSince(), r.GetUntil()); err != nil {
		return err
	}
	if _, ok := HistoryResolution_name[int32(r.GetResolution())]; !ok {
		return bad("resolution is %d: use MINUTE, HOUR, DAY, or leave it out to pick by range", int32(r.GetResolution()))
	}
	return nil
}

// Validate checks the request.
func (r *GetBalanceRequest) Validate() error { return checkName("account", r.GetAccount()) }

// Validate checks the request.
func (r *ListJournalRequest) Validate() error {
	if err := checkOptionalName("account", r.GetAccount()); err != nil {
		return err
	}
	return checkPage(r.GetPageSize(), "")
}

// Validate checks the request.
func (r *VerifyRequest) Validate() error { return nil }

// Validate checks the request.
func (r *UsageReportRequest) Validate() error {
	if r.GetFrom() == nil || r.GetTo() == nil {
		return bad("from and to are required: give the report's time range [from, to)")
	}
	if err := checkTimestamp("from", r.GetFrom()); err != nil {
		return err
	}
	if err := checkTimestamp("to", r.GetTo()); err != nil {
		return err
	}
	if !r.GetFrom().AsTime().Before(r.GetTo().AsTime()) {
		return bad("from %s is not before to %s: give a non-empty range", r.GetFrom().AsTime().Format(time.RFC3339), r.GetTo().AsTime().Format(time.RFC3339))
	}
	if _, ok := UsageGroupBy_name[int32(r.GetGroupBy())]; !ok {
		return bad("group_by is %d: use ACCOUNT or USER", int32(r.GetGroupBy()))
	}
	if len(r.GetSplitAt()) > MaxUsagePeriods-1 {
		return bad("split_at has %d times: a report has at most %d periods; report a shorter range or longer periods", len(r.GetSplitAt()), MaxUsagePeriods)
	}
	prev := r.GetFrom().AsTime()
	for i, ts := range r.GetSplitAt() {
		if err := checkTimestamp(fmt.Sprintf("split_at[%d]", i), ts); err != nil {
			return err
		}
		if t := ts.AsTime(); !t.After(prev) || !t.Before(r.GetTo().AsTime()) {
			return bad("split_at[%d] %s is not after the previous cut and before to: give increasing times inside (from, to)", i, t.Format(time.RFC3339))
		}
		prev = ts.AsTime()
	}
	return checkOptionalName("account", r.GetAccount())
}

// Validate checks the request.
func (r *AddPeerRequest) Validate() error {
	if err := checkName("id", r.GetId()); err != nil {
		return err
	}
	if r.GetRaftAddress() == "" {
		return bad("raft_address is empty: give the new server's Raft address, host:port")
	}
	return checkText("raft_address", r.GetRaftAddress(), MaxAddressBytes)
}

// Validate checks the request.
func (r *RemovePeerRequest) Validate() error {
	// A server's node id follows the name rule (its --node-id).
	return checkName("id", r.GetId())
}

// Validate checks the request.
func (r *UpdateSettingsRequest) Validate() error {
	if r.Policy == nil && r.Window == nil && r.Timeout == nil && r.Placement == nil && r.Backfill == nil && r.Quantum == nil &&
		r.LtrfResource == nil && len(r.GetBillingWeights()) == 0 && r.BillingRule == nil && len(r.GetAddResources()) == 0 && !r.hasPaperSettings() {
		return bad("nothing to update: set at least one setting")
	}
	if err := r.validatePaperSettings(); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"policy", r.Policy}, {"window", r.Window}, {"placement", r.Placement}, {"backfill", r.Backfill}} {
		if f.value == nil {
			continue
		}
		if err := checkText(f.name, *f.value, MaxNameLength); err != nil {
			return err
		}
		if *f.value == "" {
			return bad("%s is empty: give one of the values listed in the Settings message", f.name)
		}
	}
	if err := checkDuration("timeout", r.GetTimeout(), true, 0); err != nil {
		return err
	}
	if r.Quantum != nil {
		if err := checkDuration("quantum", r.GetQuantum(), false, 0); err != nil {
			return err
		}
	}
	if r.LtrfResource != nil {
		if err := checkName("ltrf_resource", r.GetLtrfResource()); err != nil {
			return err
		}
	}
	if err := checkQuantities("billing_weights", r.GetBillingWeights()); err != nil {
		return err
	}
	if r.BillingRule != nil {
		if _, err := ledger.ParseBillingRule(r.GetBillingRule()); err != nil {
			return bad("billing_rule: %v", err)
		}
	}
	if len(r.GetAddResources()) > MaxDemandEntries {
		return bad("add_resources lists %d resources: a cluster has at most %d", len(r.GetAddResources()), MaxDemandEntries)
	}
	for _, name := range r.GetAddResources() {
		if err := checkName("add_resources entry", name); err != nil {
			return err
		}
	}
	return nil
}

// checkNotYetSupported refuses the fields of the job shape that the API
// defines but the servers do not implement yet, so that a job asking for
// them is not accepted and run without them.
func (r *SubmitJobRequest) checkNotYetSupported() error {
	for _, f := range []struct {
		set  bool
		name string
	}{} {
		if f.set {
			return bad("%s is not supported by this server yet: submit without it", f.name)
		}
	}
	return nil
}

func (r *SetLimitsRequest) Validate() error {
	if (r.GetAccount() == "") == (r.GetUser() == "") {
		return bad("limits are set for an account or for a user: give exactly one of account and user")
	}
	if err := checkOptionalName("account", r.GetAccount()); err != nil {
		return err
	}
	if err := checkOptionalName("user", r.GetUser()); err != nil {
		return err
	}
	l := r.GetLimits()
	if l.GetMaxJobs() < 0 || l.GetMaxJobMicroSu() < 0 || l.GetMaxRunningTasks() < 0 || l.GetMaxRunningNodes() < 0 {
		return bad("limits are 0 (no limit) or more: max_jobs %d, max_job_micro_su %d, max_running_tasks %d, max_running_nodes %d",
			l.GetMaxJobs(), l.GetMaxJobMicroSu(), l.GetMaxRunningTasks(), l.GetMaxRunningNodes())
	}
	return checkDuration("max_walltime", l.GetMaxWalltime(), true, MaxWalltime)
}

func (r *UpdateJobRequest) Validate() error {
	if err := checkJobID(r.GetJobId()); err != nil {
		return err
	}
	if r.Name == nil && r.Walltime == nil && r.Dependency == nil && r.ArrayThrottle == nil && r.Nice == nil && r.Priority == nil {
		return bad("nothing to update: set name, walltime, dependency, array_throttle, nice or priority")
	}
	if r.Priority != nil && (r.GetPriority() < 0 || r.GetPriority() > core.MaxPriority) {
		return bad("priority is %d: give 0 (no boost) to %d", r.GetPriority(), core.MaxPriority)
	}
	if err := checkText("name", r.GetName(), MaxJobNameBytes); err != nil {
		return err
	}
	if err := checkText("dependency", r.GetDependency(), MaxDependencyBytes); err != nil {
		return err
	}
	if r.Walltime != nil {
		if err := checkDuration("walltime", r.GetWalltime(), false, MaxWalltime); err != nil {
			return err
		}
	}
	if r.ArrayThrottle != nil && r.GetArrayThrottle() < 0 {
		return bad("array_throttle is %d: give how many of the job's tasks may run at once, or 0 for no limit", r.GetArrayThrottle())
	}
	return nil
}
