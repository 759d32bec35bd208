package fsm

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/longfair/longfair/ledger"
)

// Dependencies (Slurm's --dependency). A job may wait for other jobs, or
// elements of job arrays (JOB_TASK), to start or end:
//
//	after:ID[:ID…]       each has started (or ended)
//	afterany:ID[:ID…]    each has ended, however
//	afterok:ID[:ID…]     each has ended and succeeded
//	afternotok:ID[:ID…]  each has ended and not succeeded (failed or cancelled)
//	singleton            no earlier job of the same name and user is active
//
// Terms joined by ',' must all be met; by '?', any one. The jobs named
// must exist when the job is submitted — so a dependency cannot form a
// cycle — and an element must be within its array. A job whose
// dependency is unmet is not offered to the scheduler and takes no node;
// explain says what it waits for. Each term is resolved as the job it
// names starts and ends (resolveDependents, from the commands that start
// and end tasks), deterministically on every replica. A dependency that can
// never be met — afterok on a job that failed, say — fails the job at
// once, with the reason, and releases its SU hold.

// MaxDependencyTerms bounds the jobs one dependency names.
const MaxDependencyTerms = 100

// depKinds are the dependency types.
var depKinds = []string{"after", "afterany", "afterok", "afternotok", "singleton"}

// depTerm is one job (or element) a dependency names, and where it stands.
type depTerm struct {
	Kind string `json:"kind"`
	Job  uint64 `json:"job,omitempty"`
	// Element is set for JOB_TASK: task Task of job Job.
	Element bool  `json:"element,omitempty"`
	Task    int64 `json:"task,omitempty"`
	// Met and Never say the term is decided: met, or never to be.
	Met   bool `json:"met,omitempty"`
	Never bool `json:"never,omitempty"`
	// Why says what decided it, for explain and a failed job's reason.
	Why string `json:"why,omitempty"`
}

// dependency is a job's --dependency.
type dependency struct {
	Text  string    `json:"text"`
	Any   bool      `json:"any,omitempty"`
	Terms []depTerm `json:"terms"`
}

// parseDependency reads Slurm's dependency syntax; the jobs it names are
// checked against the state when the job is submitted (checkDependency).
func parseDependency(text string) (*dependency, *Error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	d := &dependency{Text: text}
	sep := ","
	if strings.Contains(text, "?") {
		if strings.Contains(text, ",") {
			return nil, invalid("dependency %q mixes ',' (all of) and '?' (any of): use one of them", text)
		}
		d.Any, sep = true, "?"
	}
	for _, part := range strings.Split(text, sep) {
		kind, ids, _ := strings.Cut(strings.TrimSpace(part), ":")
		if !slices.Contains(depKinds, kind) {
			return nil, invalid("dependency %q: %q is not a dependency type; use after, afterany, afterok, afternotok or singleton, e.g. afterok:12", text, kind)
		}
		if kind == "singleton" {
			if ids != "" {
				return nil, invalid("dependency %q: singleton names no jobs", text)
			}
			d.Terms = append(d.Terms, depTerm{Kind: kind})
			continue
		}
		if ids == "" {
			return nil, invalid("dependency %q: %s names no job; give %s:JOB[:JOB…], e.g. %s:12", text, kind, kind, kind)
		}
		for _, id := range strings.Split(ids, ":") {
			term := depTerm{Kind: kind}
			jobText, taskText, element := strings.Cut(id, "_")
			if strings.Contains(jobText, "+") {
				return nil, invalid("dependency %q: a delay after a job (%s) is not supported; submit with --begin instead", text, id)
			}
			n, err := strconv.ParseUint(jobText, 10, 64)
			if err != nil || n == 0 {
				return nil, invalid("dependency %q: %q is not a job id; give a job number, or JOB_TASK for an element of an array", text, id)
			}
			term.Job = n
			if element {
				t, err := strconv.ParseInt(taskText, 10, 64)
				if err != nil || t < 0 {
					return nil, invalid("dependency %q: %q is not an array element; give JOB_TASK, e.g. 12_3", text, id)
				}
				term.Element, term.Task = true, t
			}
			d.Terms = append(d.Terms, term)
		}
	}
	if len(d.Terms) > MaxDependencyTerms {
		return nil, invalid("dependency %q names %d jobs: at most %d", text, len(d.Terms), MaxDependencyTerms)
	}
	return d, nil
}

// checkDependency refuses a dependency naming a job that does not exist
// or an element outside its array, and resolves the terms already
// decided (jobs that have started or ended). A viewer ("" for anyone)
// sees only the jobs of its accounts: another's is refused as a job
// that does not exist, in the same words, so the refusal tells nothing
// of it. Nothing changes in st.
func (b *batch) checkDependency(d *dependency, viewer string) *Error {
	if d == nil {
		return nil
	}
	for i := range d.Terms {
		term := &d.Terms[i]
		if term.Kind == "singleton" {
			continue
		}
		ref, err := b.job(term.Job)
		if err != nil || !b.st.sees(viewer, ref.Account) {
			return refuse(KindNotFound, "dependency %q names job %d, which does not exist: depend on jobs that have been submitted", d.Text, term.Job)
		}
		if term.Element && term.Task >= ref.Tasks {
			return refuse(KindNotFound, "dependency %q names element %d_%d, and job %d has tasks 0 to %d", d.Text, term.Job, term.Task, term.Job, ref.Tasks-1)
		}
		b.resolveTerm(term, ref)
	}
	return nil
}

// sees is whether user may see the jobs of account: a member may; ""
// is anyone (no viewer to limit).
func (s *state) sees(user, account string) bool {
	if user == "" {
		return true
	}
	u, ok := s.users[user]
	if !ok {
		return false
	}
	_, member := slices.BinarySearch(u.Accounts, account)
	return member
}

// resolveTerm decides term from where the job it names, ref, stands.
func (b *batch) resolveTerm(term *depTerm, ref *jobRecord) {
	if term.Met || term.Never {
		return
	}
	started, ended, ok := ref.State != JobPending, ref.State.Ended(), ref.State == JobSucceeded
	what := fmt.Sprintf("job %d", ref.ID)
	if term.Element {
		what = fmt.Sprintf("element %d_%d", ref.ID, term.Task)
		started, ended, ok = b.elementState(ref, term.Task)
	}
	switch term.Kind {
	case "after":
		if started || ended {
			term.Met, term.Why = true, what+" started"
		}
	case "afterany":
		if ended {
			term.Met, term.Why = true, what+" ended"
		}
	case "afterok":
		if ended {
			term.Met, term.Never = ok, !ok
			term.Why = what + " " + map[bool]string{true: "succeeded", false: "ended without succeeding"}[ok]
		}
	case "afternotok":
		if ended {
			term.Met, term.Never = !ok, ok
			term.Why = what + " " + map[bool]string{true: "succeeded", false: "ended without succeeding"}[ok]
		}
	}
}

// elementState is whether task of job ref has started, has ended for
// good (no attempt left to run), and ended succeeding.
func (b *batch) elementState(ref *jobRecord, task int64) (started, ended, ok bool) {
	if a, running := b.st.running[taskID{ref.ID, task}]; running {
		// One waiting in a look-ahead queue has not started.
		return a.State != TaskQueued, false, false
	}
	requeued := slices.ContainsFunc(ref.Requeued, func(r requeuedTask) bool { return r.Task == task })
	if task >= ref.NextFresh && ref.CancelledAt == 0 || requeued && !ref.State.Ended() {
		return requeued, false, false
	}
	// Placed at least once, and not running nor queued again: its last
	// attempt decides, if it has one (a cancelled job's unplaced tasks
	// have none and did not succeed).
	var last attemptRecord
	prefix := taskPrefix(ref.ID, task)
	c := b.bucket(bucketTasks).Cursor()
	found := false
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := jsonUnmarshal(v, &last); err == nil {
			found = true
		}
	}
	return found, true, found && last.State == TaskSucceeded
}

// waiting says why job j may not start yet because of its dependency,
// or "" when it may. Singleton is judged against the active jobs now.
func (s *state) waiting(j *jobRecord) string {
	return j.Dep.unmet(func() string {
		if other := s.earlierNamesake(j); other != 0 {
			return fmt.Sprintf("singleton (job %d of the same name and user has not ended)", other)
		}
		return ""
	})
}

// unmet lists what of the dependency is still open, "" when nothing
// holds the job back; singleton says what a singleton term waits for
// ("" when nothing).
func (d *dependency) unmet(singleton func() string) string {
	if d == nil {
		return ""
	}
	var open []string
	for _, term := range d.Terms {
		met := term.Met
		if term.Kind == "singleton" {
			why := singleton()
			if met = why == ""; !met {
				open = append(open, why)
				continue
			}
		}
		if met && d.Any {
			return ""
		}
		if !met && !term.Never {
			open = append(open, termText(term))
		}
	}
	if len(open) == 0 {
		return ""
	}
	joiner := " and "
	if d.Any {
		joiner = " or "
	}
	return "its dependency: " + strings.Join(open, joiner)
}

// earlierNamesake is an active job of j's user and name submitted before
// it, in any account, or 0.
func (s *state) earlierNamesake(j *jobRecord) uint64 {
	for _, acct := range s.accountNames {
		for _, id := range s.accountJobs[acct] {
			if id >= j.ID {
				break
			}
			if o := s.jobs[id]; o.User == j.User && o.Name == j.Name {
				return id
			}
		}
	}
	return 0
}

// never says why j's dependency can never be met, or "".
func (d *dependency) never() string {
	if d == nil {
		return ""
	}
	var why []string
	for _, term := range d.Terms {
		switch {
		case term.Never && !d.Any:
			return fmt.Sprintf("its dependency %s can never be met: %s", d.Text, term.Why)
		case term.Never:
			why = append(why, term.Why)
		case d.Any:
			return "" // a term still open, or met
		}
	}
	if d.Any && len(why) == len(d.Terms) {
		return fmt.Sprintf("its dependency %s can never be met: %s", d.Text, strings.Join(why, "; "))
	}
	return ""
}

// open is what of j's dependency is unmet as last recorded, for reads
// that have no state to judge singleton by (they name it), "" once j
// has started or ended.
func (d *dependency) open(j *jobRecord) string {
	if j.State != JobPending {
		return ""
	}
	return d.unmet(func() string { return "singleton" })
}

// text is the dependency as submitted; "" for none.
func (d *dependency) text() string {
	if d == nil {
		return ""
	}
	return d.Text
}

func termText(t depTerm) string {
	if t.Element {
		return fmt.Sprintf("%s:%d_%d", t.Kind, t.Job, t.Task)
	}
	return fmt.Sprintf("%s:%d", t.Kind, t.Job)
}

// resolveDependents re-decides the dependencies naming job ref, which
// has just started, had a task start or end, or ended; a dependent whose
// dependency can now never be met fails, and its own dependents are
// resolved in turn.
func (b *batch) resolveDependents(ref *jobRecord, t ledger.Time) error {
	work := []*jobRecord{ref}
	for len(work) > 0 {
		r := work[0]
		work = work[1:]
		for _, id := range b.st.dependents[r.ID] {
			dj, ok := b.st.jobs[id]
			if !ok || dj.Dep == nil {
				continue
			}
			for i := range dj.Dep.Terms {
				if term := &dj.Dep.Terms[i]; term.Job == r.ID {
					b.resolveTerm(term, r)
				}
			}
			b.markJob(dj)
			if why := dj.Dep.never(); why != "" && dj.pending() > 0 && dj.Running == 0 {
				if err := b.failUnmet(dj, why, t); err != nil {
					return err
				}
				work = append(work, dj)
			}
		}
		if r.State.Ended() {
			delete(b.st.dependents, r.ID)
		}
	}
	return nil
}

// failUnmet fails job j, whose dependency can never be met: its tasks
// will not run, and its hold is released.
func (b *batch) failUnmet(j *jobRecord, why string, t ledger.Time) error {
	j.Failed += j.pending()
	j.NextFresh, j.Requeued = j.Tasks, nil
	j.Reason = why
	b.markJob(j)
	b.touched[j.Account] = true
	return b.maybeEndJob(j, t)
}

// noteDependents indexes j's dependency by the jobs it names.
func (s *state) noteDependents(j *jobRecord) {
	if j.Dep == nil {
		return
	}
	for _, term := range j.Dep.Terms {
		if term.Kind != "singleton" && !slices.Contains(s.dependents[term.Job], j.ID) {
			s.dependents[term.Job] = append(s.dependents[term.Job], j.ID)
		}
	}
}
