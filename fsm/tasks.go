package fsm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// TaskPlacement places task Task of job JobID on node Node. A task of a
// parallel job lists all its nodes in Nodes, Node first.
type TaskPlacement struct {
	JobID uint64   `json:"job"`
	Task  int64    `json:"task"`
	Node  string   `json:"node"`
	Nodes []string `json:"nodes,omitempty"`
	// Credential, for a parallel task, is the secret a process must show
	// to start another on one of the task's nodes (`longfair exec`): made
	// by the leader from a random source when it places the task, kept
	// with the attempt, sent only to the task's workers.
	Credential string `json:"credential,omitempty"`
	// Queued puts the task in the node's look-ahead queue (lookahead.go)
	// rather than on its free resources: it waits there, holding nothing,
	// until its worker starts it in a slot a task's end freed.
	Queued bool `json:"queued,omitempty"`
}

// Assign is one scheduling pass's placements. Each is re-checked at apply
// (node up, capacity free, task still pending); stale ones are dropped and
// reported in the AssignResult, the rest are applied.
type Assign struct {
	Placements []TaskPlacement `json:"placements"`
}

func (*Assign) Type() CommandType { return TypeAssign }

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
		if err := checkPlacementNodes(i, p); err != nil {
			return err
		}
	}
	return nil
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
// leader): it is charged that runtime; without one, up to now. A
// TaskStarted's Runtime is how long the task had run when its worker sent
// the start, which it holds back briefly so that a short task's start and
// end share one entry (worker: table.event): the attempt started that long
// before the entry, though not before it was placed.
type TaskEvent struct {
	JobID    uint64        `json:"job"`
	Task     int64         `json:"task"`
	Attempt  int           `json:"attempt"`
	Kind     TaskEventKind `json:"kind"`
	ExitCode int32         `json:"exit_code,omitempty"`
	Runtime  time.Duration `json:"runtime,omitempty"`
	// CPUSeconds, PeakMemBytes and OOMKilled are what the attempt used,
	// measured by a confined worker's cgroup (task_usage.go).
	CPUSeconds   float64 `json:"cpu_seconds,omitempty"`
	PeakMemBytes int64   `json:"peak_mem_bytes,omitempty"`
	OOMKilled    bool    `json:"oom_killed,omitempty"`
}

// TaskEvents is a batch of task events. Events that no longer match the
// task's current attempt (duplicates, late reports) are ignored and reported
// in the EventsResult, never applied twice.
type TaskEvents struct {
	Events []TaskEvent `json:"events"`
}

func (*TaskEvents) Type() CommandType { return TypeTaskEvents }

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
		if err := checkUsage(i, e); err != nil {
			return err
		}
	}
	return nil
}

// TaskState is where a task attempt is in its life.
type TaskState string

// Task attempt states.
const (
	TaskQueued    TaskState = "queued"
	TaskAssigned  TaskState = "assigned"
	TaskRunning   TaskState = "running"
	TaskSucceeded TaskState = "succeeded"
	TaskFailed    TaskState = "failed"
	TaskLostState TaskState = "lost"
)

// active reports whether the attempt still holds its node's resources, or
// a place in its node's queue.
func (s TaskState) active() bool { return s == TaskAssigned || s == TaskRunning || s == TaskQueued }

// attemptRecord is one attempt of one task: written when the task is
// placed, updated when it starts and when it ends.
type attemptRecord struct {
	Job     uint64 `json:"job"`
	Task    int64  `json:"task"`
	Attempt int    `json:"attempt"`
	Account string `json:"account"`
	User    string `json:"user"`
	Node    string `json:"node"`
	// Nodes lists every node of a parallel task, Node (its head) first;
	// empty for a one-node task.
	Nodes []string `json:"nodes,omitempty"`
	// Demand is what the attempt holds in all: what fairness counts and
	// the ledger charges. NodeDemand, set for a parallel task, is what it
	// holds on each of its nodes (Demand is len(Nodes) × NodeDemand).
	Demand     ledger.Vector `json:"demand"`
	NodeDemand ledger.Vector `json:"node_demand,omitempty"`
	// Credential is the parallel task's exec secret (TaskPlacement).
	Credential string      `json:"credential,omitempty"`
	State      TaskState   `json:"state"`
	AssignedAt ledger.Time `json:"assigned_at"`
	// CountedFrom is when the fairness book started counting the attempt:
	// its placement, or the last change of fairness window.
	CountedFrom ledger.Time   `json:"counted_from"`
	StartedAt   ledger.Time   `json:"started_at,omitempty"`
	EndedAt     ledger.Time   `json:"ended_at,omitempty"`
	ExitCode    int32         `json:"exit_code,omitempty"`
	Runtime     time.Duration `json:"runtime,omitempty"`
	Charged     ledger.SU     `json:"charged,omitempty"`
	// Measured usage and the end's reason (task_usage.go).
	CPUSeconds   float64 `json:"cpu_seconds,omitempty"`
	PeakMemBytes int64   `json:"peak_mem_bytes,omitempty"`
	Reason       string  `json:"reason,omitempty"`
	// Requeue marks an attempt a RequeueJob stops: when it ends, its task
	// is queued again (jobs_requeue.go), and it is charged against
	// ChargeHold rather than the job's hold.
	Requeue    bool   `json:"requeue,omitempty"`
	ChargeHold string `json:"charge_hold,omitempty"`
	// Queued: placed in its node's look-ahead queue; its fairness count
	// and charge run from StartedAt, not AssignedAt (lookahead.go).
	Queued bool `json:"queued,omitempty"`
	// Walltime is the limit the attempt was sent when its job's walltime
	// was lowered after it was placed (jobs_update.go); 0: its job's.
	Walltime time.Duration `json:"walltime,omitempty"`
}

// limit is how long attempt a of job j may run: what it is charged for at
// most, and when backfill expects it to end.
func (a *attemptRecord) limit(j *jobRecord) time.Duration {
	if a.Walltime != 0 || j == nil {
		return a.Walltime
	}
	return j.Walltime
}

// PlacedTask is an accepted placement: the attempt it started, on Node,
// and for a parallel task on all of Nodes (Node first).
type PlacedTask struct {
	JobID   uint64   `json:"job"`
	Task    int64    `json:"task"`
	Attempt int      `json:"attempt"`
	Node    string   `json:"node"`
	Nodes   []string `json:"nodes,omitempty"`
	// Queued: the attempt waits in its node's look-ahead queue.
	Queued bool `json:"queued,omitempty"`
	// Limit is the walltime the attempt is sent (TaskInfo.Limit).
	Limit time.Duration `json:"limit"`
}

// DroppedPlacement is a placement Assign did not apply, and why.
type DroppedPlacement struct {
	Placement TaskPlacement `json:"placement"`
	Reason    string        `json:"reason"`
}

// AssignResult is the result of Assign.
type AssignResult struct {
	Accepted []PlacedTask
	Dropped  []DroppedPlacement
}

// IgnoredEvent is a task event TaskEvents did not apply, and why.
type IgnoredEvent struct {
	Event  TaskEvent `json:"event"`
	Reason string    `json:"reason"`
}

// EventsResult is the result of TaskEvents.
type EventsResult struct {
	Applied int
	Ignored []IgnoredEvent
}

// assign applies Assign; the result is an *AssignResult.
func (b *batch) assign(c *Assign, t ledger.Time) (any, error) {
	res := &AssignResult{}
	for _, p := range c.Placements {
		placed, reason, err := b.place(p, t)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			res.Dropped = append(res.Dropped, DroppedPlacement{Placement: p, Reason: reason})
			continue
		}
		res.Accepted = append(res.Accepted, placed)
	}
	return res, nil
}

// place applies one placement, or says why it is stale.
func (b *batch) place(p TaskPlacement, t ledger.Time) (PlacedTask, string, error) {
	st := b.st
	j, ok := st.jobs[p.JobID]
	if !ok {
		return PlacedTask{}, "job is unknown or has ended", nil
	}
	if j.CancelledAt != 0 {
		return PlacedTask{}, "job was cancelled", nil
	}
	attempt, requeued := 0, -1
	switch {
	case p.Task == j.NextFresh && j.NextFresh < j.Tasks:
		attempt = 1
	default:
		requeued = slices.IndexFunc(j.Requeued, func(r requeuedTask) bool { return r.Task == p.Task })
		if requeued < 0 {
			return PlacedTask{}, "task is not pending, or is not the job's next pending task", nil
		}
		attempt = j.Requeued[requeued].Attempt
	}
	if why, _ := st.heldBack(j, t); why != "" {
		return PlacedTask{}, "job waits for " + why, nil
	}
	nodes, reason := st.placementNodes(j, p)
	if reason != "" {
		return PlacedTask{}, reason, nil
	}
	a := &attemptRecord{
		Job: j.ID, Task: p.Task, Attempt: attempt, Account: j.Account, User: j.User, Node: p.Node,
		Demand: j.allocation(), State: TaskAssigned, AssignedAt: t, CountedFrom: t,
	}
	if p.Queued {
		a.State, a.Queued = TaskQueued, true
		j.Queued++
	}
	if j.Nodes > 1 {
		a.Nodes, a.NodeDemand, a.Credential = slices.Clone(p.Nodes), j.Demand.Clone(), p.Credential
	}
	if err := b.saveAttempt(a); err != nil {
		return PlacedTask{}, "", err
	}
	id := taskID{j.ID, p.Task}
	st.running[id] = a
	for _, nd := range nodes {
		st.hold(nd, a)
		nd.tasks[id] = struct{}{}
	}
	if requeued >= 0 {
		j.Requeued = slices.Delete(j.Requeued, requeued, requeued+1)
	} else {
		j.NextFresh++
	}
	j.Running++
	st.setRunning(j)
	if !p.Queued {
		// A job whose tasks only wait in queues has not started.
		j.State = JobRunning
		st.fair.TaskStarted(j.Account, a.Demand, t)
	}
	b.markJob(j)
	b.touched[j.Account] = true
	b.noteQueuePlacement(j, t)
	if err := b.resolveDependents(j, t); err != nil {
		return PlacedTask{}, "", err
	}
	return PlacedTask{JobID: j.ID, Task: p.Task, Attempt: attempt, Node: p.Node, Nodes: slices.Clone(a.Nodes), Queued: p.Queued, Limit: a.limit(j)}, "", nil
}

// changeAttempts calls change on each of j's active attempts, in task
// order, and saves those it reports changed.
func (b *batch) changeAttempts(j *jobRecord, change func(*attemptRecord) bool) error {
	for _, id := range sortedTaskIDs(b.st.running) {
		if a := b.st.running[id]; a.Job == j.ID && change(a) {
			if err := b.saveAttempt(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// saveAttempt writes an attempt and keeps the indexes of active and ended
// attempts in step.
func (b *batch) saveAttempt(a *attemptRecord) error {
	key := taskKey(a.Job, a.Task, a.Attempt)
	if err := putJSON(b.bucket(bucketTasks), key, a); err != nil {
		return err
	}
	if a.State.active() {
		return b.bucket(bucketTasksActive).Put(key, nil)
	}
	if err := b.bucket(bucketTasksActive).Delete(key); err != nil {
		return err
	}
	return indexEnded(b.bucket(bucketTasksEnded), a)
}

// taskEvents applies TaskEvents; the result is an *EventsResult.
func (b *batch) taskEvents(c *TaskEvents, t ledger.Time) (any, error) {
	res := &EventsResult{}
	for _, e := range c.Events {
		reason, err := b.taskEvent(e, t)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			res.Ignored = append(res.Ignored, IgnoredEvent{Event: e, Reason: reason})
			continue
		}
		res.Applied++
	}
	return res, nil
}

func (b *batch) taskEvent(e TaskEvent, t ledger.Time) (string, error) {
	st := b.st
	a, ok := st.running[taskID{e.JobID, e.Task}]
	if !ok || a.Attempt != e.Attempt {
		return "the attempt is not active: a duplicate or late report", nil
	}
	j := st.jobs[e.JobID]
	switch e.Kind {
	case TaskStarted:
		if a.State == TaskRunning {
			return "the attempt was already reported started", nil
		}
		queued := a.State == TaskQueued
		if queued {
			// It takes its node's room now, whatever its worker says.
			b.startQueued(j, a, t) // lookahead.go
			a.StartedAt = t
		} else {
			a.StartedAt = max(t.Add(-max(e.Runtime, 0)), a.AssignedAt)
		}
		a.State = TaskRunning
		if err := b.saveAttempt(a); err != nil {
			return "", err
		}
		if queued {
			// Its job, or this element, may have just started.
			return "", b.resolveDependents(j, t)
		}
		return "", nil
	case TaskExited:
		runtime := min(max(e.Runtime, 0), a.limit(j))
		state := TaskSucceeded
		if e.ExitCode != 0 {
			state = TaskFailed
		}
		a.ExitCode = e.ExitCode
		b.recordUsage(a, e)
		return "", b.endAttempt(j, a, state, runtime, t)
	case TaskLost:
		b.recordUsage(a, e)
		if e.Runtime > 0 {
			// A worker that fenced the attempt measured how long it ran.
			return "", b.endAttempt(j, a, TaskLostState, min(e.Runtime, a.limit(j)), t)
		}
		return "", b.loseAttempt(j, a, t)
	}
	return fmt.Sprintf("unknown event kind %q", e.Kind), nil
}

// loseAttempt ends an attempt whose node or worker lost it, charging the
// time it held its resources, and requeues the task while it has attempts
// left.
func (b *batch) loseAttempt(j *jobRecord, a *attemptRecord, t ledger.Time) error {
	return b.loseAttemptUntil(j, a, t, t)
}

// loseAttemptUntil is loseAttempt for an attempt known to have stopped
// running at until (at most t): it is charged up to until.
func (b *batch) loseAttemptUntil(j *jobRecord, a *attemptRecord, until, t ledger.Time) error {
	from := a.AssignedAt
	if a.StartedAt != 0 {
		from = a.StartedAt
	}
	runtime := min(max(min(until, t).Sub(from), 0), a.limit(j))
	if a.State == TaskQueued {
		runtime = 0 // it held nothing yet
	}
	return b.endAttempt(j, a, TaskLostState, runtime, t)
}

// rerunHold is what attempt a of job j, ending with cost, is charged
// against when its task runs again: its job's hold while what is left of
// it covers this charge and the most every task still to be charged to it
// can cost, the rerun included; otherwise a hold of its own, of cost, so
// that the job's hold is whole for the rerun. An account that cannot fund
// it does not get the rerun: rerunHold returns "", and a says why.
func (b *batch) rerunHold(j *jobRecord, a *attemptRecord, cost ledger.SU, t ledger.Time) (string, error) {
	st := b.st
	if left, ok := st.su.HoldState(holdID(j.ID)); ok && cost <= left.Remaining {
		if need, ok := st.stillToCharge(j, a); ok && need <= left.Remaining-cost {
			return holdID(j.ID), nil
		}
	}
	id := retryHoldID(j.ID, j.Retries+1)
	entries, err := st.su.Hold(id, j.Account, cost, t)
	if err != nil {
		why := fmt.Sprintf("not run again: its rerun needs %v SU held for what this attempt ran, and account %s has %v SU available", cost, j.Account, st.su.Balance(j.Account, t).Available)
		a.Reason = strings.TrimPrefix(a.Reason+"; "+why, "; ")
		return "", nil
	}
	if err := b.saveJournal(entries); err != nil {
		return "", err
	}
	j.Retries++
	a.ChargeHold = id
	return id, nil
}

// stillToCharge is the most job j's hold may yet be charged for, but for
// attempt a: its other active attempts charged to it, each up to its
// limit, and its pending tasks with one more (a's rerun), each up to the
// job's walltime. ok is false when that does not fit an SU.
func (s *state) stillToCharge(j *jobRecord, a *attemptRecord) (ledger.SU, bool) {
	limits := map[time.Duration]int{j.Walltime: int(j.pending()) + 1}
	if j.Running > 1 {
		for _, o := range s.running {
			if o.Job == j.ID && o != a && o.ChargeHold == "" {
				limits[o.limit(j)]++
			}
		}
	}
	var need ledger.SU
	for limit, n := range limits { // a sum: the order does not matter
		h, err := ledger.WorstCaseHold(n, limit, j.allocation(), s.settings.BillingWeights, s.settings.BillingRule)
		if err != nil || h > ledger.MaxSU-need {
			return 0, false
		}
		need += h
	}
	return need, true
}

// endAttempt charges an attempt's runtime, frees its node, tells the
// fairness book, counts the task's outcome and ends the job when it was the
// last task.
func (b *batch) endAttempt(j *jobRecord, a *attemptRecord, state TaskState, runtime time.Duration, t ledger.Time) error {
	st := b.st
	queued := a.State == TaskQueued
	id := taskID{a.Job, a.Task}
	for _, node := range a.allNodes() {
		if nd, ok := st.nodes[node]; ok {
			st.release(nd, a)
			delete(nd.tasks, id)
		}
	}
	weights, rule := st.settings.BillingWeights, st.settings.BillingRule
	detail := ledger.ChargeDetail{Runtime: runtime, Demand: a.Demand.Clone(), Weights: weights.Clone(), Resources: slices.Clone(st.settings.Resources), Rule: rule}
	charged := holdID(j.ID)
	if a.ChargeHold != "" {
		charged = a.ChargeHold
	}
	cost, err := ledger.Cost(runtime, a.Demand, weights, rule)
	priced := err == nil
	if !priced {
		// Billing weights raised since submission can price a task beyond
		// what an SU holds. The hold is the most a job can be billed, so
		// bill what is left of it, without a detail that would not add up.
		hold, _ := st.su.HoldState(charged)
		cost, detail = hold.Remaining, ledger.ChargeDetail{}
		b.log.Warn("fsm: task cost does not fit an SU; charging the rest of the job's hold", "job", j.ID, "task", a.Task, "err", err)
	}
	// Does its task run again: requeued (by RequeueJob, or taken back
	// from a look-ahead queue), or lost with attempts left?
	rerun := state != TaskSucceeded && j.CancelledAt == 0 && (a.Requeue || state == TaskLostState && a.Attempt < j.MaxAttempts)
	if rerun && a.ChargeHold == "" && cost > 0 && priced && b.rules.fundsRetries() {
		if charged, err = b.rerunHold(j, a, cost, t); err != nil {
			return err
		}
		rerun = charged != ""
		if !rerun {
			charged = holdID(j.ID)
		}
	}
	entries, err := st.su.Charge(charged, chargeID(a.Job, a.Task, a.Attempt), cost, detail, t)
	if err != nil {
		// The SU book refusing a charge is a bug, but it is the same bug on
		// every server: record the attempt uncharged rather than stop the
		// cluster on this entry.
		b.log.Error("fsm: SU book refused a task charge; the attempt is recorded uncharged", "job", j.ID, "task", a.Task, "attempt", a.Attempt, "err", err)
		entries = nil
	}
	if err := b.saveJournal(entries); err != nil {
		return err
	}
	for _, e := range entries {
		a.Charged += e.Amount
		j.Charged += e.Amount
	}
	a.State, a.EndedAt, a.Runtime = state, t, runtime
	if err := b.saveAttempt(a); err != nil {
		return err
	}
	delete(st.running, id)
	if !queued {
		st.fair.TaskEnded(j.Account, a.Demand, a.CountedFrom, t)
	}
	j.Running--
	if queued {
		j.Queued--
	}
	st.setRunning(j)
	switch {
	case state == TaskSucceeded:
		j.Succeeded++
	case j.CancelledAt != 0:
		// Cancelling stops running attempts (their workers kill them), so
		// an attempt of a cancelled job that did not succeed was cancelled.
		j.Cancelled++
	case rerun:
		// Requeued, it runs again however it ended; lost, while it has
		// attempts left.
		j.Requeued = append(j.Requeued, requeuedTask{Task: a.Task, Attempt: a.Attempt + 1})
	default:
		j.Failed++
	}
	b.touched[j.Account] = true
	b.markJob(j)
	if err := b.maybeEndJob(j, t); err != nil {
		return err
	}
	return b.resolveDependents(j, t)
}
