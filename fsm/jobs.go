package fsm

import (
	"fmt"
	"slices"
	"strings"
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
	MaxNodesPerJob     = core.MaxNodesPerJob
)

// SubmitJob submits an array of Tasks identical tasks. RequestID, when set,
// makes the submission idempotent: a second SubmitJob with the same id
// returns the first job and holds nothing more.
//
// CheckFit refuses the job, holding nothing, when no known node — up or
// down — could hold one of its tasks even idle (jobs_fit.go); with no node
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

	RequestID string             `json:"request_id,omitempty"`
	Account   string             `json:"account"`
	User      string             `json:"user"`
	Name      string             `json:"name,omitempty"`
	Demand    map[string]float64 `json:"demand"`
	Tasks     int64              `json:"tasks"`
	// Nodes is how many nodes each task spans, Demand on each (a parallel
	// job, jobs_nodes.go); 0 and 1 mean one node.
	Nodes int `json:"nodes,omitempty"`
	// Ranks is how many processes a parallel task runs across its nodes
	// (Slurm's --ntasks); 0 is one per node. Only its environment reads it.
	Ranks int `json:"ranks,omitempty"`
	// Exclusive takes each node whole (jobs_exclusive.go).
	Exclusive   bool          `json:"exclusive,omitempty"`
	Walltime    time.Duration `json:"walltime"`
	Command     []string      `json:"command"`
	MaxAttempts int           `json:"max_attempts,omitempty"`
	CheckFit    bool          `json:"check_fit,omitempty"`
	// Dir and Env are the working directory and the environment the job
	// captured at submission (EnvCaptured: even an empty one), which its
	// tasks run in (identity.go). CheckIdentity (servers set it) refuses
	// a user that maps to root. Entries before them lack all three.
	Dir           string   `json:"dir,omitempty"`
	Env           []string `json:"env,omitempty"`
	EnvCaptured   bool     `json:"env_captured,omitempty"`
	CheckIdentity bool     `json:"check_identity,omitempty"`
	// Dependency is Slurm's --dependency (jobs_deps.go); Begin, Throttle
	// and Nice the job's other terms (jobs_terms.go).
	Dependency string      `json:"dependency,omitempty"`
	Begin      ledger.Time `json:"begin,omitempty"`
	Throttle   int         `json:"throttle,omitempty"`
	Nice       int         `json:"nice,omitempty"`
	// Hold submits the job held (jobs_hold.go).
	Hold bool `json:"hold,omitempty"`
	// DependencyViewer, when set (servers set it to the user of a user
	// token), limits the jobs Dependency may name to those of the
	// viewer's accounts: another account's job is refused as a job that
	// does not exist, so a dependency tells nothing of jobs the user may
	// not see. Entries before it lack it.
	DependencyViewer string `json:"dependency_viewer,omitempty"`
}

func (*SubmitJob) Type() CommandType { return TypeSubmitJob }

func (c *SubmitJob) validate(r rules) *Error {
	if err := c.checkTerms(); err != nil {
		return err
	}
	if _, err := parseDependency(c.Dependency); err != nil {
		return err
	}
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
	if c.DependencyViewer != "" {
		if err := checkName("dependency viewer", c.DependencyViewer); err != nil {
			return err
		}
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
	if c.Nodes < 0 || c.Nodes > MaxNodesPerJob {
		return invalid("nodes is %d: a task spans 1 to %d nodes (0 means 1)", c.Nodes, MaxNodesPerJob)
	}
	if c.Ranks < 0 || c.Ranks > MaxTasksPerJob {
		return invalid("ranks is %d: a parallel task runs 1 to %d processes (0 means one per node)", c.Ranks, MaxTasksPerJob)
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
	return checkLaunch(r, c.Dir, c.Env)
}

// CancelJob cancels a job's pending tasks. Running tasks run until their
// worker reports them ended; the job is cancelled when the last one has.
type CancelJob struct {
	JobID uint64 `json:"job_id"`
}

func (*CancelJob) Type() CommandType { return TypeCancelJob }

func (c *CancelJob) validate(r rules) *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	return nil
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

// requeuedTask is a task waiting for another attempt after it was lost.
type requeuedTask struct {
	Task    int64 `json:"task"`
	Attempt int   `json:"attempt"` // the attempt it will run as
}

// jobRecord is a job array. Pending tasks are not stored one by one: tasks
// [NextFresh, Tasks) have never been placed, and Requeued lists lost tasks
// waiting for another attempt, so a million-task array is one record.
type jobRecord struct {
	ID        uint64 `json:"id"`
	RequestID string `json:"request_id,omitempty"`
	Account   string `json:"account"`
	User      string `json:"user"`
	Name      string `json:"name,omitempty"`
	// Demand is what each task takes on each of its nodes.
	Demand ledger.Vector `json:"demand"`
	// Nodes is how many nodes each task spans; 0 is one (jobs_nodes.go).
	Nodes int `json:"nodes,omitempty"`
	// Ranks is how many processes each task runs (SubmitJob.Ranks).
	Ranks int `json:"ranks,omitempty"`
	// Exclusive jobs take each node whole: Demand is its class's
	// capacity, Asked what the submission asked for (jobs_exclusive.go).
	Exclusive   bool           `json:"exclusive,omitempty"`
	Asked       ledger.Vector  `json:"asked,omitempty"`
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
	// Queued counts the attempts among Running that wait in a node's
	// look-ahead queue (lookahead.go).
	Queued    int64     `json:"queued,omitempty"`
	Succeeded int64     `json:"succeeded"`
	Failed    int64     `json:"failed"`
	Cancelled int64     `json:"cancelled"`
	Hold      ledger.SU `json:"hold"`
	Charged   ledger.SU `json:"charged"`
	// What the tasks run as and in (identity.go); absent in jobs
	// submitted before identities existed.
	Dir         string        `json:"dir,omitempty"`
	Env         []string      `json:"env,omitempty"`
	EnvCaptured bool          `json:"env_captured,omitempty"`
	RunAs       *UnixIdentity `json:"run_as,omitempty"`
	// Dep is the job's dependency (jobs_deps.go); Reason says why a job
	// failed without its tasks failing (a dependency never to be met).
	Dep    *dependency `json:"dependency,omitempty"`
	Reason string      `json:"reason,omitempty"`
	// Begin, Throttle and Nice are the job's terms (jobs_terms.go).
	Begin    ledger.Time `json:"begin,omitempty"`
	Throttle int         `json:"throttle,omitempty"`
	Nice     int         `json:"nice,omitempty"`
	// Held jobs start no task until released (jobs_hold.go).
	Held bool `json:"held,omitempty"`
	// Priority is an admin's boost (jobs_terms.go); 0 for none.
	Priority int `json:"priority,omitempty"`
	// Requeues counts the RequeueJob commands applied to the job, each
	// with its hold (jobs_requeue.go).
	Requeues int `json:"requeues,omitempty"`
	// Retries counts the lost attempts that were charged against holds of
	// their own so that their tasks could run again (tasks.go endAttempt).
	Retries int `json:"retries,omitempty"`
}

// pending is how many tasks wait to be placed.
func (j *jobRecord) pending() int64 {
	return j.Tasks - j.NextFresh + int64(len(j.Requeued))
}

// holdID names a job's SU hold; chargeID names one attempt's charge, so a
// repeated exit report can never charge twice.
func holdID(job uint64) string { return fmt.Sprintf("job-%d", job) }

func chargeID(job uint64, task int64, attempt int) string {
	return fmt.Sprintf("job-%d.task-%d.attempt-%d", job, task, attempt)
}

// demandVector turns named quantities into a vector over the cluster's
// resources, refusing names the cluster does not have, and rounds each up
// to whole units of its resource (ledger.Unit.RoundUp): the rounded vector
// is what the job stores, places, bills and shows. A legacy entry's demand
// is kept as logged (SubmitJob.legacy).
func (s *state) demandVector(field string, q map[string]float64, legacy bool) (ledger.Vector, *Error) {
	v := ledger.NewVector(len(s.settings.Resources))
	for _, name := range sortedKeys(q) {
		k := slices.Index(s.settings.Resources, name)
		if k < 0 {
			return nil, invalid("%s names unknown resource %q: the cluster's resources are %s; ask an admin to add it", field, name, strings.Join(s.settings.Resources, ", "))
		}
		x, err := s.resourceUnits()[k].RoundUp(field+"["+name+"]", q[name])
		if legacy {
			x, err = q[name], nil
		}
		if err != nil {
			return nil, invalid("%v", err)
		}
		v[k] = x
	}
	return v, nil
}

// submitJob applies SubmitJob; the result is a JobInfo.
func (b *batch) submitJob(c *SubmitJob, t ledger.Time) (any, error) {
	st := b.st
	maxAttempts := c.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if c.RequestID != "" {
		if v := b.bucket(bucketRequests).Get([]byte(c.RequestID)); v != nil {
			j, err := b.job(readU64(v))
			if err != nil {
				return nil, err
			}
			if !st.sameSubmission(j, c, maxAttempts) {
				return nil, refuse(KindExists, "request id %q was already used to submit job %d, which differs from this request: use a new request id for a new job", c.RequestID, j.ID)
			}
			return st.jobInfo(j), nil
		}
	}
	demand, hold, runAs, refusal := st.admit(c)
	if refusal != nil {
		return nil, refusal
	}
	if refusal := st.checkSubmitLimits(c, hold); refusal != nil {
		return nil, refusal
	}
	dep, refusal := parseDependency(c.Dependency)
	if refusal == nil {
		refusal = b.checkDependency(dep, c.DependencyViewer)
	}
	if refusal != nil {
		return nil, refusal
	}
	if why := dep.never(); why != "" {
		return nil, refuse(KindPrecondition, "the job would never start: %s; submit it without that dependency", why)
	}
	id := st.nextJob + 1
	entries, err := st.su.Hold(holdID(id), c.Account, hold, t)
	if err != nil {
		r := ledgerRefusal(err)
		if r.Kind == KindInsufficientFunds {
			r.Msg = fmt.Sprintf("job of %d tasks%s × %v needs a hold of %v SU: %s", c.Tasks, nodesPhrase(c.Nodes), c.Walltime, hold, r.Msg)
		}
		return nil, r
	}
	j := &jobRecord{
		ID: id, RequestID: c.RequestID, Account: c.Account, User: c.User, Name: c.Name,
		Demand: demand, Nodes: c.Nodes, Ranks: c.Ranks, Exclusive: c.Exclusive, Tasks: c.Tasks, Walltime: c.Walltime, Command: slices.Clone(c.Command),
		MaxAttempts: maxAttempts, SubmittedAt: t, State: JobPending, Hold: hold,
		Dir: c.Dir, Env: slices.Clone(c.Env), EnvCaptured: c.EnvCaptured,
	}
	if c.CheckIdentity {
		j.RunAs = &runAs
	}
	if c.Exclusive {
		j.Asked, _ = st.demandVector("demand", c.Demand, c.legacy)
	}
	j.Dep, j.Begin, j.Throttle, j.Nice, j.Held = dep, c.Begin, c.Throttle, c.Nice, c.Hold
	if err := b.saveJournal(entries); err != nil {
		return nil, err
	}
	if err := b.bucket(bucketJobsAccount).Put(indexKey(j.Account, id), nil); err != nil {
		return nil, fmt.Errorf("index job %d: %w", id, err)
	}
	if err := b.bucket(bucketJobsUser).Put(indexKey(j.User, id), nil); err != nil {
		return nil, fmt.Errorf("index job %d: %w", id, err)
	}
	if c.RequestID != "" {
		if err := b.bucket(bucketRequests).Put([]byte(c.RequestID), u64(id)); err != nil {
			return nil, fmt.Errorf("index job %d: %w", id, err)
		}
	}
	st.nextJob = id
	st.jobs[id] = j
	st.accountJobs[j.Account] = append(st.accountJobs[j.Account], id)
	st.noteDependents(j)
	b.markJob(j)
	b.touched[j.Account] = true
	return st.jobInfo(j), nil
}

// admit checks a submission against the state — the account, the user
// and membership, the Unix account the user runs as, the demand in the
// cluster's resources and units, and the nodes that could hold it — and
// prices its hold. Nothing changes:
// submitJob holds the SU next, and Quote answers with it.
func (s *state) admit(c *SubmitJob) (ledger.Vector, ledger.SU, UnixIdentity, *Error) {
	var none UnixIdentity
	if _, ok := s.accounts[c.Account]; !ok {
		return nil, 0, none, notFound("account %q does not exist: check the name", c.Account)
	}
	u, ok := s.users[c.User]
	if !ok {
		return nil, 0, none, notFound("user %q does not exist: check the name, or ask an admin to create the user", c.User)
	}
	if _, member := slices.BinarySearch(u.Accounts, c.Account); !member {
		return nil, 0, none, refuse(KindPermission, "user %q is not a member of account %q: submit to one of its accounts (%s) or ask an admin to add the membership", c.User, c.Account, strings.Join(u.Accounts, ", "))
	}
	runAs := u.runAs()
	if c.CheckIdentity {
		if refusal := checkRunAs(c.User, runAs); refusal != nil {
			return nil, 0, none, refusal
		}
	}
	demand, refusal := s.demandVector("demand", c.Demand, c.legacy)
	if refusal != nil {
		return nil, 0, none, refusal
	}
	if c.Exclusive {
		if demand, refusal = s.wholeNodes(demand, c.Nodes); refusal != nil {
			return nil, 0, none, refusal
		}
	} else if c.CheckFit {
		if refusal := s.checkFit(demand, c.Nodes); refusal != nil {
			return nil, 0, none, refusal
		}
	}
	// The hold prices each task's whole allocation with ledger.Cost under
	// the same weights and rule as its charge (endAttempt), so it covers
	// every charge.
	hold, err := ledger.WorstCaseHold(int(c.Tasks), c.Walltime, allocation(demand, c.Nodes), s.settings.BillingWeights, s.settings.BillingRule)
	if err != nil {
		return nil, 0, none, invalid("%v", err)
	}
	return demand, hold, runAs, nil
}

// sameSubmission reports whether c asks for exactly job j.
func (s *state) sameSubmission(j *jobRecord, c *SubmitJob, maxAttempts int) bool {
	demand, err := s.demandVector("demand", c.Demand, c.legacy)
	asked := j.Demand
	if j.Exclusive {
		asked = j.Asked
	}
	return err == nil && j.Account == c.Account && j.User == c.User && j.Name == c.Name && j.Exclusive == c.Exclusive && j.Dep.text() == strings.TrimSpace(c.Dependency) && j.Begin == c.Begin && j.Throttle == c.Throttle && j.Nice == c.Nice &&
		sameBits(pad(asked, len(demand)), demand) && j.Nodes == c.Nodes && j.Ranks == c.Ranks && j.Tasks == c.Tasks && j.Walltime == c.Walltime &&
		slices.Equal(j.Command, c.Command) && j.MaxAttempts == maxAttempts && sameLaunch(j, c)
}

// cancelJob applies CancelJob; the result is a JobInfo. Cancelling a
// cancelled job again returns it unchanged.
func (b *batch) cancelJob(c *CancelJob, t ledger.Time) (any, error) {
	st := b.st
	j, err := b.job(c.JobID)
	if err != nil {
		return nil, err
	}
	if j.CancelledAt != 0 {
		return st.jobInfo(j), nil
	}
	if j.State.Ended() {
		return nil, refuse(KindPrecondition, "job %d already %s at %s: there is nothing left to cancel", j.ID, j.State, formatTime(j.EndedAt))
	}
	j.Cancelled += j.pending()
	j.NextFresh, j.Requeued = j.Tasks, nil
	j.CancelledAt = t
	b.markJob(j)
	if err := b.maybeEndJob(j, t); err != nil {
		return nil, err
	}
	if err := b.resolveDependents(j, t); err != nil {
		return nil, err
	}
	b.touched[j.Account] = true
	return st.jobInfo(j), nil
}

// job returns a job, active or ended, or a NotFound refusal.
func (b *batch) job(id uint64) (*jobRecord, error) {
	if j, ok := b.st.jobs[id]; ok {
		return j, nil
	}
	j := new(jobRecord)
	ok, err := getJSON(b.bucket(bucketJobs), jobKey(id), j)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("job %d does not exist: check the id", id)
	}
	j.Demand = pad(j.Demand, len(b.st.settings.Resources))
	return j, nil
}

// maybeEndJob ends a job whose every task has ended or was cancelled: it
// releases the rest of its hold and drops it from the active jobs.
func (b *batch) maybeEndJob(j *jobRecord, t ledger.Time) error {
	if j.Running > 0 || j.pending() > 0 || j.State.Ended() {
		return nil
	}
	st := b.st
	entries, err := st.su.Release(holdID(j.ID), t)
	if err != nil {
		// As with charges: the same on every server, so log it and go on.
		b.log.Error("fsm: SU book refused to release a job's hold", "job", j.ID, "err", err)
		entries = nil
	}
	if err := b.saveJournal(entries); err != nil {
		return err
	}
	if err := b.releaseRequeueHolds(j, t); err != nil {
		return err
	}
	switch {
	case j.Cancelled > 0:
		j.State = JobCancelled
	case j.Failed > 0:
		j.State = JobFailed
	default:
		j.State = JobSucceeded
	}
	j.EndedAt = t
	delete(st.jobs, j.ID)
	ids := st.accountJobs[j.Account]
	if i, ok := slices.BinarySearch(ids, j.ID); ok {
		ids = slices.Delete(ids, i, i+1)
	}
	if len(ids) == 0 {
		delete(st.accountJobs, j.Account)
	} else {
		st.accountJobs[j.Account] = ids
	}
	return nil
}

// saveJob writes a job and keeps the indexes of active and ended jobs in
// step.
func (b *batch) saveJob(j *jobRecord) error {
	if err := putJSON(b.bucket(bucketJobs), jobKey(j.ID), j); err != nil {
		return err
	}
	active := b.bucket(bucketJobsActive)
	if j.State.Ended() {
		if err := indexEndedJob(b.bucket(bucketJobsEnded), j); err != nil {
			return err
		}
		return active.Delete(jobKey(j.ID))
	}
	return active.Put(jobKey(j.ID), nil)
}
