package fsm

import (
	"fmt"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// Limits (a light form of Slurm's QOS limits), per account and per user,
// set by admins. Zero is no limit.
//
//   - MaxJobs: jobs submitted and not ended; MaxWalltime: a task's
//     walltime; MaxJobSU: a job's SU hold (its worst-case cost). A
//     submission over one of these is refused, naming the limit.
//   - MaxRunningTasks, MaxRunningNodes: tasks running at once, and the
//     nodes they span (a parallel task counts each of its nodes). A job
//     that would go past one waits: the scheduler's view offers only what
//     the limits leave (heldBack, jobs_terms.go), the FSM drops a
//     placement past them, and explain names the limit.
//
// An account's limits bound all its users' work in it together; a user's
// bound the user's work in all accounts.
type Limits struct {
	MaxJobs         int           `json:"max_jobs,omitempty"`
	MaxWalltime     time.Duration `json:"max_walltime,omitempty"`
	MaxJobSU        ledger.SU     `json:"max_job_su,omitempty"`
	MaxRunningTasks int           `json:"max_running_tasks,omitempty"`
	MaxRunningNodes int           `json:"max_running_nodes,omitempty"`
}

// SetLimits replaces the limits of an account (Account) or a user (User).
type SetLimits struct {
	Account string `json:"account,omitempty"`
	User    string `json:"user,omitempty"`
	Limits  Limits `json:"limits"`
}

func (*SetLimits) Type() CommandType { return TypeSetLimits }

func (c *SetLimits) validate(rules) *Error {
	if (c.Account == "") == (c.User == "") {
		return invalid("limits are set for an account or for a user: give exactly one of them")
	}
	l := c.Limits
	if l.MaxJobs < 0 || l.MaxWalltime < 0 || l.MaxJobSU < 0 || l.MaxRunningTasks < 0 || l.MaxRunningNodes < 0 {
		return invalid("limits are counts, durations and amounts of 0 (no limit) or more")
	}
	return nil
}

// setLimits applies SetLimits; the result is the Limits set.
func (b *batch) setLimits(c *SetLimits) (any, error) {
	st := b.st
	if c.Account != "" {
		old, ok := st.accounts[c.Account]
		if !ok {
			return nil, notFound("account %q does not exist: check the name", c.Account)
		}
		a := *old
		a.Limits = c.Limits
		if err := putJSON(b.bucket(bucketAccounts), []byte(a.Name), &a); err != nil {
			return nil, err
		}
		st.accounts[a.Name] = &a
		b.touched[a.Name] = true
		return c.Limits, nil
	}
	old, ok := st.users[c.User]
	if !ok {
		return nil, notFound("user %q does not exist: check the name", c.User)
	}
	u := *old
	u.Limits = c.Limits
	if err := putJSON(b.bucket(bucketUsers), []byte(u.Name), &u); err != nil {
		return nil, err
	}
	st.users[u.Name] = &u
	for _, acct := range u.Accounts {
		b.touched[acct] = true
	}
	return c.Limits, nil
}

// limited names who a limit belongs to: "account phys" or "user ann".
type limited struct {
	who    string
	limits Limits
}

// limitsOf are the limits a job of account and user is under.
func (s *state) limitsOf(account, user string) []limited {
	var out []limited
	if a, ok := s.accounts[account]; ok && a.Limits != (Limits{}) {
		out = append(out, limited{"account " + account, a.Limits})
	}
	if u, ok := s.users[user]; ok && u.Limits != (Limits{}) {
		out = append(out, limited{"user " + user, u.Limits})
	}
	return out
}

// checkSubmitLimits refuses a submission over its account's or user's
// limits on jobs, walltime or cost.
func (s *state) checkSubmitLimits(c *SubmitJob, hold ledger.SU) *Error {
	for _, l := range s.limitsOf(c.Account, c.User) {
		if m := l.limits.MaxWalltime; m > 0 && c.Walltime > m {
			return refuse(KindPrecondition, "%s allows a walltime of at most %v (its max_walltime), and the job asks %v: ask for less", l.who, m, c.Walltime)
		}
		if m := l.limits.MaxJobSU; m > 0 && hold > m {
			return refuse(KindPrecondition, "%s allows a job to cost at most %v SU (its max_job_su), and this job's hold is %v SU: submit fewer tasks, shorter or smaller", l.who, m, hold)
		}
		if m := l.limits.MaxJobs; m > 0 {
			if n := s.activeJobs(l.who, c.Account, c.User); n >= m {
				return refuse(KindPrecondition, "%s may have at most %d jobs not ended (its max_jobs), and has %d: wait for some to end", l.who, m, n)
			}
		}
	}
	return nil
}

// activeJobs counts the jobs not ended of the account or the user who
// names.
func (s *state) activeJobs(who, account, user string) int {
	if strings.HasPrefix(who, "account ") {
		return len(s.accountJobs[account])
	}
	n := 0
	for _, acct := range s.users[user].Accounts {
		for _, id := range s.accountJobs[acct] {
			if s.jobs[id].User == user {
				n++
			}
		}
	}
	return n
}

// runningOf is what the account or user who names runs now: tasks, and
// the nodes they span.
func (s *state) runningOf(who, account, user string) (tasks, nodes int64) {
	add := func(j *jobRecord) {
		tasks += j.Running
		nodes += j.Running * int64(max(j.Nodes, 1))
	}
	// Only the jobs with running tasks (state.runningJobs), not every
	// active one: this is asked for each placement.
	if strings.HasPrefix(who, "account ") {
		for _, id := range s.runningJobs[account] {
			add(s.jobs[id])
		}
		return tasks, nodes
	}
	for _, acct := range s.users[user].Accounts {
		for _, id := range s.runningJobs[acct] {
			if j := s.jobs[id]; j.User == user {
				add(j)
			}
		}
	}
	return tasks, nodes
}

// runningRoom is how many more tasks of job j its limits let start now,
// and, when none, which limit stops it (-1: no limit applies).
func (s *state) runningRoom(j *jobRecord) (room int64, why string) {
	return newBudget(s).room(j)
}

// budget is what the running limits leave while a view is built: each
// job's offer is taken from it, so that the jobs of one account (or one
// user) are together offered no more than their limits leave.
type budget struct {
	st           *state
	tasks, nodes map[string]int64 // left, by who the limit is
}

func newBudget(st *state) *budget {
	return &budget{st: st, tasks: map[string]int64{}, nodes: map[string]int64{}}
}

// room is how many tasks of job j the limits leave, and, when none, which
// limit stops it; -1 when no limit applies.
func (b *budget) room(j *jobRecord) (room int64, why string) {
	room = -1
	per := int64(max(j.Nodes, 1))
	for _, l := range b.st.limitsOf(j.Account, j.User) {
		b.fill(l, j)
		if m := l.limits.MaxRunningTasks; m > 0 {
			if left := max(b.tasks[l.who], 0); room < 0 || left < room {
				room = left
				why = fmt.Sprintf("%s's limit of %d running tasks (max_running_tasks)", l.who, m)
			}
		}
		if m := l.limits.MaxRunningNodes; m > 0 {
			if left := max(b.nodes[l.who], 0) / per; room < 0 || left < room {
				room = left
				why = fmt.Sprintf("%s's limit of %d running nodes (max_running_nodes)", l.who, m)
			}
		}
	}
	if room != 0 {
		why = ""
	}
	return room, why
}

// take counts n tasks of job j as offered.
func (b *budget) take(j *jobRecord, n int64) {
	for _, l := range b.st.limitsOf(j.Account, j.User) {
		b.tasks[l.who] -= n
		b.nodes[l.who] -= n * int64(max(j.Nodes, 1))
	}
}

// fill reads, once per view, what limit l leaves.
func (b *budget) fill(l limited, j *jobRecord) {
	if _, ok := b.tasks[l.who]; ok {
		return
	}
	tasks, nodes := b.st.runningOf(l.who, j.Account, j.User)
	b.tasks[l.who] = int64(l.limits.MaxRunningTasks) - tasks
	b.nodes[l.who] = int64(l.limits.MaxRunningNodes) - nodes
}
