package fsm

import (
	"bytes"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// TaskInfo is one attempt of one task.
type TaskInfo struct {
	JobID   uint64
	Task    int64
	Attempt int
	State   TaskState
	Node    string
	// Nodes lists every node of a parallel task, Node (its head) first;
	// nil for a one-node task.
	Nodes []string
	// Credential is a parallel task's exec secret, for its workers only:
	// never shown to users.
	Credential string
	AssignedAt ledger.Time
	StartedAt  ledger.Time
	EndedAt    ledger.Time
	ExitCode   int32
	Runtime    time.Duration
	Charged    ledger.SU
	// CPUSeconds and PeakMemBytes are what the attempt used, as its
	// worker measured it (0: not measured); Reason says why it ended
	// when it was not its own doing (task_usage.go).
	CPUSeconds   float64
	PeakMemBytes int64
	Reason       string
	// Requeue: a RequeueJob stopped (or is stopping) the attempt, and its
	// task runs again (jobs_requeue.go).
	Requeue bool
	// Queued: the attempt was placed in its node's look-ahead queue, and
	// held nothing until StartedAt (lookahead.go).
	Queued bool
	// Limit is how long an active attempt may run, the walltime its
	// worker is sent: its job's, or the one it kept when its job's was
	// lowered after it was placed (attemptRecord.limit). Once it has
	// ended, only a kept one is given (its job's may have been lowered
	// since); 0 otherwise.
	Limit time.Duration
}

// taskInfo is attempt a of job j.
func taskInfo(a *attemptRecord, j *jobRecord) TaskInfo {
	limit := a.Walltime
	if a.State.active() {
		limit = a.limit(j)
	}
	return TaskInfo{
		Limit: limit,
		JobID: a.Job, Task: a.Task, Attempt: a.Attempt, State: a.State, Node: a.Node, Nodes: slices.Clone(a.Nodes), Credential: a.Credential,
		AssignedAt: a.AssignedAt, StartedAt: a.StartedAt, EndedAt: a.EndedAt,
		ExitCode: a.ExitCode, Runtime: a.Runtime, Charged: a.Charged,
		CPUSeconds: a.CPUSeconds, PeakMemBytes: a.PeakMemBytes, Reason: a.Reason, Requeue: a.Requeue, Queued: a.Queued,
	}
}

// Tasks lists the latest attempt of each task of a job that has been placed
// at least once, by task index, starting at task from.
func (f *FSM) Tasks(job uint64, from int64, limit int) (tasks []TaskInfo, next int64, err error) {
	return f.attempts(job, from, limit, false)
}

// Attempts is Tasks with every attempt of each task, oldest first; limit
// counts tasks, so a page holds every attempt of the tasks it holds.
func (f *FSM) Attempts(job uint64, from int64, limit int) (tasks []TaskInfo, next int64, err error) {
	return f.attempts(job, from, limit, true)
}

// attempts is TasksOf for one job.
func (f *FSM) attempts(job uint64, from int64, limit int, all bool) (tasks []TaskInfo, next int64, err error) {
	tasks, at, err := f.TasksOf([]uint64{job}, TasksCursor{Task: from}, limit, all)
	if at.Job == 0 {
		next = at.Task
	}
	return tasks, next, err
}

// TasksCursor is where a listing of several jobs' tasks (TasksOf) goes
// on: the position of a job in the list, and a task index in that job.
type TasksCursor struct {
	Job  int
	Task int64
}

// TasksOf lists the tasks of each of jobs in turn, as Tasks (or, with all,
// Attempts) lists one job's, starting at cursor at and holding up to limit
// tasks in all, whole, from one read of the state. next is where the
// following page starts; its Job is len(jobs) once every job was listed.
// A job that does not exist is an error naming it.
func (f *FSM) TasksOf(jobs []uint64, at TasksCursor, limit int, all bool) (tasks []TaskInfo, next TasksCursor, err error) {
	limit = pageLimit(limit)
	next = TasksCursor{Job: len(jobs)}
	err = f.view(func(_ readSnap, tx *bolt.Tx) error {
		count := 0
		for k := max(at.Job, 0); k < len(jobs); k++ {
			if count == limit {
				next = TasksCursor{Job: k}
				return nil
			}
			from := int64(0)
			if k == at.Job {
				from = at.Task
			}
			var n int
			var more int64
			var err error
			tasks, n, more, err = jobAttempts(tx, jobs[k], from, limit-count, all, tasks)
			if err != nil {
				return err
			}
			count += n
			if more != 0 {
				next = TasksCursor{Job: k, Task: more}
				return nil
			}
		}
		return nil
	})
	return tasks, next, err
}

// jobAttempts appends to tasks the attempts of job's tasks from task index
// from on, by index: up to limit tasks, each with every attempt (all) or
// its latest. It returns how many tasks it added, and the index of the
// first task it left out (0: none was).
func jobAttempts(tx *bolt.Tx, job uint64, from int64, limit int, all bool, tasks []TaskInfo) (_ []TaskInfo, count int, next int64, err error) {
	var j jobRecord
	if ok, err := getJSON(tx.Bucket(bucketJobs), jobKey(job), &j); err != nil || !ok {
		if err != nil {
			return tasks, 0, 0, err
		}
		return tasks, 0, 0, notFound("job %d does not exist: check the id", job)
	}
	c := tx.Bucket(bucketTasks).Cursor()
	prefix := taskPrefix(job, -1)
	// group holds the current task's attempts, oldest first (keys sort by
	// attempt); a task is added whole when the next begins.
	var group []*attemptRecord
	flush := func() bool {
		if len(group) == 0 {
			return true
		}
		if count == limit {
			next = group[0].Task
			return false
		}
		count++
		if !all {
			group = group[len(group)-1:]
		}
		for _, a := range group {
			tasks = append(tasks, taskInfo(a, &j))
		}
		group = group[:0]
		return true
	}
	for k, v := c.Seek(taskPrefix(job, max(from, 0))); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		a := new(attemptRecord)
		if err := jsonUnmarshal(v, a); err != nil {
			return tasks, count, 0, err
		}
		if len(group) > 0 && group[0].Task != a.Task && !flush() {
			return tasks, count, next, nil
		}
		group = append(group, a)
	}
	flush()
	return tasks, count, next, nil
}

// Running lists the attempts that hold resources (placed or running), on
// one node or, with node empty, on all, ordered by job and task. A worker
// reconnecting to a new leader is reconciled against this list.
func (f *FSM) Running(node string) []TaskInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []TaskInfo
	for _, id := range sortedTaskIDs(f.st.running) {
		if a := f.st.running[id]; node == "" || slices.Contains(a.allNodes(), node) {
			out = append(out, taskInfo(a, f.st.jobs[id.job]))
		}
	}
	return out
}

// Attempt returns one attempt of one task, current or past (Tasks lists
// only each task's latest). Reading an earlier attempt's output needs the
// node it ran on.
func (f *FSM) Attempt(job uint64, task int64, attempt int) (TaskInfo, error) {
	var info TaskInfo
	err := f.view(func(_ readSnap, tx *bolt.Tx) error {
		var a attemptRecord
		ok, err := getJSON(tx.Bucket(bucketTasks), taskKey(job, task, attempt), &a)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("attempt %d of task %d of job %d does not exist: check the job, the task index and the attempt", attempt, task, job)
		}
		var j jobRecord
		if _, err := getJSON(tx.Bucket(bucketJobs), jobKey(job), &j); err != nil {
			return err
		}
		info = taskInfo(&a, &j)
		return nil
	})
	return info, err
}
