package fsm

import (
	"bytes"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// JobInfo is a job array.
type JobInfo struct {
	ID        uint64
	RequestID string
	Account   string
	User      string
	Name      string
	// Demand is per task, or for a parallel job per node of each task.
	Demand map[string]float64
	// Nodes is how many nodes each task spans (0: one).
	Nodes int
	// Ranks is how many processes each parallel task runs (0: one per node).
	Ranks int
	// Exclusive jobs take each node whole: Demand is the class's capacity.
	Exclusive   bool
	Tasks       int64
	Walltime    time.Duration
	Command     []string
	MaxAttempts int
	State       JobState
	SubmittedAt ledger.Time
	EndedAt     ledger.Time // 0 while the job runs
	CancelledAt ledger.Time // 0 unless cancelled
	// Task counts; they add up to Tasks. A task waiting in a node's
	// look-ahead queue has not started: it counts as pending (as running,
	// being stopped, once the job is cancelled), and in Queued too.
	Pending, Running, Succeeded, Failed, Cancelled int64
	Queued                                         int64
	// Hold is the SU hold placed at submission, Charged what the job's
	// attempts were charged so far.
	Hold, Charged ledger.SU
	// Dir and Env are what the job captured at submission (EnvCaptured:
	// an environment, possibly empty, was); RunAs is the Unix account its
	// tasks run as.
	Dir         string
	Env         []string
	EnvCaptured bool
	RunAs       UnixIdentity
	// Dependency is the job's --dependency as submitted; Waiting says
	// what of it is still unmet ("" once it may start); Reason why it
	// failed without running (a dependency never to be met).
	Dependency, Waiting, Reason string
	// WaitKind is what Waiting is about: WaitDependency, WaitBegin or
	// WaitThrottle ("" when nothing of the job's own holds it back).
	WaitKind string
	// Begin, Throttle and Nice are the job's terms (jobs_terms.go).
	Begin    ledger.Time
	Throttle int
	Nice     int
	Held     bool
	// Priority is an admin's boost (jobs_terms.go).
	Priority int
	// Requeues counts the job's RequeueJob commands (jobs_requeue.go).
	Requeues int
}

func (s *state) jobInfo(j *jobRecord) JobInfo {
	info := jobInfo(j, s.settings.Resources)
	if !j.State.Ended() && j.pending() > 0 {
		info.Waiting, info.WaitKind = s.heldBack(j, s.now)
	}
	return info
}

func jobInfo(j *jobRecord, resources []string) JobInfo {
	waiting := j.waiting()
	return JobInfo{
		ID: j.ID, RequestID: j.RequestID, Account: j.Account, User: j.User, Name: j.Name,
		Demand: named(resources, j.Demand), Nodes: j.Nodes, Ranks: j.Ranks, Exclusive: j.Exclusive, Tasks: j.Tasks, Walltime: j.Walltime, Command: slices.Clone(j.Command),
		MaxAttempts: j.MaxAttempts, State: j.State, SubmittedAt: j.SubmittedAt, EndedAt: j.EndedAt, CancelledAt: j.CancelledAt,
		Pending: j.pending() + waiting, Running: j.Running - waiting, Queued: j.Queued,
		Succeeded: j.Succeeded, Failed: j.Failed, Cancelled: j.Cancelled,
		Hold: j.Hold, Charged: j.Charged,
		Dir: j.Dir, Env: slices.Clone(j.Env), EnvCaptured: j.EnvCaptured, RunAs: jobRunAs(j),
		Dependency: j.Dep.text(), Reason: j.Reason, Waiting: j.Dep.open(j),
		Begin: j.Begin, Throttle: j.Throttle, Nice: j.Nice, Held: j.Held, Priority: j.Priority, Requeues: j.Requeues,
	}
}

// JobFilter selects jobs for Jobs. Empty fields match everything.
type JobFilter struct {
	Account string
	User    string
	States  []JobState
	// Since and Until, when not zero, keep only the jobs that were queued
	// or running at some time from Since to Until: submitted at or before
	// Until and not ended before Since, as sacct selects them. With Since,
	// Jobs reads the window's jobs through the index of ended jobs
	// (jobs_window.go) rather than every job.
	Since, Until ledger.Time
	// Before lists only jobs with a smaller id (0: from the newest); pass
	// the next value Jobs returned to get the following page.
	Before uint64
	Limit  int
}

// matches reports whether job j passes every filter of q.
func (q *JobFilter) matches(j *jobRecord) bool {
	return (q.Account == "" || j.Account == q.Account) && (q.User == "" || j.User == q.User) &&
		(len(q.States) == 0 || slices.Contains(q.States, j.State)) && q.activeIn(j)
}

// Job returns one job.
func (f *FSM) Job(id uint64) (JobInfo, error) {
	var info JobInfo
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		var j jobRecord
		ok, err := getJSON(tx.Bucket(bucketJobs), jobKey(id), &j)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("job %d does not exist: check the id", id)
		}
		info = jobInfo(&j, rs.resources)
		return nil
	})
	if err == nil && !info.State.Ended() {
		// Singleton is judged against the active jobs, which only the
		// state knows.
		f.mu.RLock()
		if j, ok := f.st.jobs[id]; ok {
			info.Waiting, info.WaitKind = "", ""
			if j.pending() > 0 {
				info.Waiting, info.WaitKind = f.st.heldBack(j, f.st.now)
			}
		}
		f.mu.RUnlock()
	}
	return info, err
}

// Jobs lists jobs newest first.
func (f *FSM) Jobs(q JobFilter) (jobs []JobInfo, next uint64, err error) {
	if q.Since > 0 && q.Until > 0 && q.Until < q.Since {
		return nil, 0, invalid("the window ends (%s) before it starts (%s): give since ≤ until", formatTime(q.Until), formatTime(q.Since))
	}
	limit := pageLimit(q.Limit)
	err = f.view(func(rs readSnap, tx *bolt.Tx) error {
		all := tx.Bucket(bucketJobs)
		// add lists job id if it matches, and reports whether to go on.
		add := func(id uint64) (bool, error) {
			var j jobRecord
			if ok, err := getJSON(all, jobKey(id), &j); err != nil || !ok {
				return false, err
			}
			if !q.matches(&j) {
				return true, nil
			}
			if len(jobs) == limit {
				next = jobs[len(jobs)-1].ID
				return false, nil
			}
			jobs = append(jobs, jobInfo(&j, rs.resources))
			return true, nil
		}
		if q.Since > 0 {
			ids, err := jobsInWindow(tx, &q)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if more, err := add(id); !more || err != nil {
					return err
				}
			}
			return nil
		}
		// Walk an index when there is one to walk, newest first.
		var index *bolt.Bucket
		var prefix []byte
		switch {
		case q.Account != "":
			index, prefix = tx.Bucket(bucketJobsAccount), append([]byte(q.Account), 0)
		case q.User != "":
			index, prefix = tx.Bucket(bucketJobsUser), append([]byte(q.User), 0)
		default:
			index = all
		}
		c := index.Cursor()
		start := append(slices.Clone(prefix), u64(q.Before)...)
		if q.Before == 0 {
			start = append(slices.Clone(prefix), bytes.Repeat([]byte{0xff}, 8)...)
		}
		k, _ := c.Seek(start)
		if k == nil {
			k, _ = c.Last()
		}
		for ; k != nil && bytes.Compare(k, start) >= 0; k, _ = c.Prev() {
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			if more, err := add(readU64(k[len(prefix):])); !more || err != nil {
				return err
			}
		}
		return nil
	})
	return jobs, next, err
}
