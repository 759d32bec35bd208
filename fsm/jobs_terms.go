package fsm

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// A job's own terms, besides its dependency (jobs_deps.go), that hold its
// tasks back whatever the cluster has free:
//
//   - Begin (--begin): no task starts before this time.
//   - Throttle (the % of --array): at most this many tasks run at once.
//   - Nice (--nice): the job's place among its account's pending jobs.
//     An account's jobs start in submission order; a job with a higher
//     nice goes after the account's jobs with a lower one, never before
//     another account's (fairness ranks accounts, not jobs), so a user
//     can let their own urgent work pass their bulk work. Negative nice
//     moves a job ahead and needs an admin (the servers check).
//   - Priority (an admin's boost, UpdateJob): unlike nice it crosses
//     accounts. The view lists an account's boosted jobs first, highest
//     first, and marks them (sched.Job.Boost), and the engine serves an
//     account whose next job is boosted before every account by fairness
//     order, the highest boost first (sched/rank.go). Fairness still
//     counts what the job uses, so its account pays it back later.
//
// The scheduler's view offers only what these allow, so the engine needs
// no notion of them, and the FSM re-checks each placement against them.

// MaxNice bounds --nice either way (Slurm's range).
const MaxNice = 2147483645

// MaxPriority bounds an admin's boost.
const MaxPriority = core.MaxPriority

// Wait kinds: what holds a pending job back by its own terms.
const (
	WaitDependency = "dependency"
	WaitBegin      = "begin"
	WaitThrottle   = "throttle"
	WaitHeld       = "held"
	WaitLimit      = "limit"
)

// heldBack says what of job j's own terms keeps its next task from
// starting at now, and which kind ("" and "" when none does).
func (s *state) heldBack(j *jobRecord, now ledger.Time) (why, kind string) {
	if j.Held {
		return "its release: it is held", WaitHeld
	}
	if w := s.waiting(j); w != "" {
		return w, WaitDependency
	}
	if now < j.Begin {
		return "its begin time, " + formatTime(j.Begin), WaitBegin
	}
	if j.Throttle > 0 && j.Running >= int64(j.Throttle) {
		return fmt.Sprintf("its throttle: at most %d of its tasks run at once", j.Throttle), WaitThrottle
	}
	if room, why := s.runningRoom(j); room == 0 {
		return why, WaitLimit
	}
	return "", ""
}

// offered is how many of job j's pending tasks the scheduler may place
// now: all of them, or what its throttle and limits (room, -1 for none)
// leave.
func (j *jobRecord) offered(room int64) int64 {
	p := j.pending()
	if j.Throttle > 0 {
		p = min(p, max(int64(j.Throttle)-j.Running, 0))
	}
	if room >= 0 {
		p = min(p, room)
	}
	return p
}

// checkTerms refuses malformed terms of a submission.
func (c *SubmitJob) checkTerms() *Error {
	if c.Throttle < 0 {
		return invalid("array throttle is %d: give how many tasks may run at once, or 0 for no limit", c.Throttle)
	}
	if c.Nice < -MaxNice || c.Nice > MaxNice {
		return invalid("nice is %d: give %d to %d", c.Nice, -MaxNice, MaxNice)
	}
	if c.Begin < 0 || c.Begin > ledger.Time(1<<62) {
		return invalid("begin time %d is out of range", c.Begin)
	}
	return nil
}

// viewEntries appends the scheduler's queue entries of job j's offered
// tasks to q: requeued tasks first, then fresh ones.
func (j *jobRecord) viewEntries(q []sched.Job, room int64) []sched.Job {
	left := j.offered(room)
	for _, r := range j.Requeued {
		if left == 0 {
			return q
		}
		q = append(q, j.viewJob(int(r.Task), 1))
		left--
	}
	if fresh := min(j.Tasks-j.NextFresh, left); fresh > 0 {
		q = append(q, j.viewJob(int(j.NextFresh), int(fresh)))
	}
	return q
}

// sortByNice orders an account's queue by its jobs' boost, highest
// first, then by their nice, stably, so that jobs of equal boost and nice
// keep submission order.
func sortByNice(q []sched.Job, jobs map[uint64]*jobRecord) {
	nice := func(e sched.Job) int {
		if j, ok := jobs[e.ID]; ok {
			return j.Nice
		}
		return 0
	}
	for i := range q {
		if nice(q[i]) != 0 || q[i].Boost != 0 {
			slices.SortStableFunc(q, func(x, y sched.Job) int {
				if c := cmp.Compare(y.Boost, x.Boost); c != 0 {
					return c
				}
				return cmp.Compare(nice(x), nice(y))
			})
			return
		}
	}
}
