package fsm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

func depJob(name, dep string, tasks int64) *SubmitJob {
	return &SubmitJob{Account: "phys", User: "ann", Name: name, Demand: map[string]float64{"cpu": 1}, Tasks: tasks,
		Walltime: time.Hour, Command: []string{"x"}, Dependency: dep}
}

// queued reports whether the scheduler's view offers job id.
func queued(h *harness, id uint64) bool {
	for _, a := range h.f.View(h.now).Accounts {
		for _, j := range a.Queue {
			if j.ID == id {
				return true
			}
		}
	}
	return false
}

// run places task of job on n1, starts it and ends it with code.
func run(h *harness, job uint64, task int64, code int32) {
	h.t.Helper()
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: job, Task: task, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 1 {
		h.t.Fatalf("task %d.%d was not placed: %+v", job, task, res)
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: job, Task: task, Attempt: 1, Kind: TaskStarted}, exited(job, task, 1, code, time.Minute)}})
}

// An afterok chain: the dependent is not offered to the scheduler, nor
// placed, until the job it names succeeds; explain-worthy text says
// what it waits for.
func TestAfterokWaitsForSuccess(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("first", "", 1))
	second := h.ok(depJob("second", "afterok:1", 1)).(JobInfo)
	if second.Waiting != "its dependency: afterok:1" || second.Dependency != "afterok:1" {
		t.Fatalf("the dependent job says dependency %q, waiting %q", second.Dependency, second.Waiting)
	}
	if queued(h, 2) {
		t.Fatal("a job whose dependency is unmet is offered to the scheduler")
	}
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !strings.Contains(res.Dropped[0].Reason, "afterok:1") {
		t.Fatalf("a placement of the waiting job: %+v; want it dropped, saying it waits for afterok:1", res)
	}
	run(h, 1, 0, 0)
	if !queued(h, 2) {
		t.Fatal("the dependent is not offered once the job it names succeeded")
	}
	if j, _ := h.f.Job(2); j.Waiting != "" {
		t.Fatalf("the dependent still waits for %q", j.Waiting)
	}
	run(h, 2, 0, 0)
}

// A dependency that can never be met fails the job with the reason and
// releases its hold; jobs that depend on that one fail in turn.
func TestNeverMetDependencyFailsTheJob(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	before := balance(t, h)
	h.ok(depJob("first", "", 1))
	h.ok(depJob("second", "afterok:1", 3))
	h.ok(depJob("third", "afterany:1,afterok:2", 1))
	h.ok(depJob("cleanup", "afternotok:1", 1))
	run(h, 1, 0, 2) // fails
	for id, want := range map[uint64]string{2: "afterok:1 can never be met: job 1 ended without succeeding", 3: "afterok:2 can never be met: job 2 ended without succeeding"} {
		j, err := h.f.Job(id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != JobFailed || !strings.Contains(j.Reason, want) {
			t.Fatalf("job %d is %v with reason %q; want failed, %q", id, j.State, j.Reason, want)
		}
	}
	if !queued(h, 4) {
		t.Fatal("the afternotok job is not offered after the job it names failed")
	}
	run(h, 4, 0, 0)
	after := balance(t, h)
	charged := ledger.SU(0)
	for _, id := range []uint64{1, 4} {
		j, _ := h.f.Job(id)
		charged += j.Charged
	}
	if after.Held != before.Held || after.Available != before.Available-charged {
		t.Fatalf("balance %+v → %+v with %v charged: the failed dependents' holds were not released", before, after, charged)
	}
	// afternotok on a job that succeeded can never be met either.
	h.ok(depJob("ok", "", 1))
	h.ok(depJob("on-failure", "afternotok:5", 1))
	run(h, 5, 0, 0)
	if j, _ := h.f.Job(6); j.State != JobFailed {
		t.Fatalf("afternotok on a job that succeeded left the job %v", j.State)
	}
}

// '?' is any of; an array element is decided by that task alone; after
// is met once the job starts.
func TestDependencyForms(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 1))                      // 1
	h.ok(depJob("b", "", 1))                      // 2
	h.ok(depJob("array", "", 3))                  // 3
	h.ok(depJob("any", "afterok:1?afterok:2", 1)) // 4
	h.ok(depJob("element", "afterok:3_0", 1))     // 5
	h.ok(depJob("started", "after:2", 1))         // 6
	h.ok(depJob("later", "afterany:3", 1))        // 7
	run(h, 1, 0, 1)                               // 1 fails: job 4 still may start on 2
	if j, _ := h.f.Job(4); j.State != JobPending || queued(h, 4) {
		t.Fatalf("afterok:1?afterok:2 after job 1 failed: %v, offered %v; want pending and waiting for job 2", j.State, queued(h, 4))
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "n1"}}})
	if !queued(h, 6) {
		t.Fatal("after:2 is not met once job 2 started")
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}, exited(2, 0, 1, 0, time.Minute)}})
	if !queued(h, 4) {
		t.Fatal("afterok:1?afterok:2 is not met once job 2 succeeded")
	}
	run(h, 3, 0, 0)
	if !queued(h, 5) || queued(h, 7) {
		t.Fatalf("after element 3_0 succeeded: element dependent offered %v (want true), afterany:3 offered %v (want false: tasks 1 and 2 have not run)", queued(h, 5), queued(h, 7))
	}
}

// singleton: a job waits while an earlier job of its name and user is
// active.
func TestSingleton(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("nightly", "", 1))
	h.ok(depJob("nightly", "singleton", 1))
	h.ok(depJob("other", "singleton", 1))
	if queued(h, 2) || !queued(h, 3) {
		t.Fatalf("singletons offered: second nightly %v (want false), other %v (want true)", queued(h, 2), queued(h, 3))
	}
	run(h, 1, 0, 0)
	if !queued(h, 2) {
		t.Fatal("the second nightly is not offered once the first ended")
	}
}

// Bad dependencies are refused, holding nothing: malformed text before
// it is logged, unknown jobs and elements, one never to be met.
func TestBadDependenciesAreRefused(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 2))
	run(h, 1, 0, 1)
	run(h, 1, 1, 0)
	before := balance(t, h)
	for dep, want := range map[string]string{
		"afterok":                       "names no job",
		"afterwards:1":                  "not a dependency type",
		"afterok:x":                     "not a job id",
		"afterok:1,afterok:2?afterok:3": "mixes",
		"afterok:1+10":                  "--begin",
		"afterok:99":                    "job 99, which does not exist",
		"afterok:1_5":                   "job 1 has tasks 0 to 1",
		"afterok:1":                     "would never start",
		"afterok:1_0":                   "element 1_0 ended without succeeding",
	} {
		_, err := Encode(h.now, depJob("bad", dep, 1))
		if err == nil {
			err = h.apply(depJob("bad", dep, 1)).Err
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("dependency %q: %v; want a refusal saying %q", dep, err, want)
		}
	}
	if after := balance(t, h); after != before {
		t.Fatalf("refused submissions changed the balance: %+v → %+v", before, after)
	}
	h.ok(depJob("fine", "afterok:1_1", 1))
}

// The dependents survive a restart: a job ending after it still
// releases the job that waits for it.
func TestDependentsSurviveARestart(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("first", "", 1))
	h.ok(depJob("second", "afterok:1", 1))
	h.f.Close()
	h.f = openFSM(t, h.dir)
	run(h, 1, 0, 0)
	if !queued(h, 2) {
		t.Fatal("after a restart the dependent is not offered once the job it names succeeded")
	}
}

// A dependency on a job of an account its viewer (a user token's user)
// is not a member of is refused as a job that does not exist, in the
// same words and kind, holding nothing: it tells nothing of that job.
// Without a viewer (an admin, no ACL) it is accepted as before.
func TestDependencyOnAnUnseenJobIsRefusedAsUnknown(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&CreateAccount{Name: "bio"})
	h.ok(&CreateUser{Name: "bob", Accounts: []string{"bio"}})
	h.ok(&Grant{ID: "g2", Account: "bio", Amount: 1000 * ledger.MicroPerSU})
	bobs := h.ok(&SubmitJob{Account: "bio", User: "bob", Name: "bobs", Demand: map[string]float64{"cpu": 1}, Tasks: 2,
		Walltime: time.Hour, Command: []string{"x"}}).(JobInfo).ID
	own := h.ok(depJob("own", "", 1)).(JobInfo).ID
	unknown := bobs + 100
	before := balance(t, h)
	// ann's refusal naming bob's job, with the id replaced, reads as her
	// refusal naming a job that does not exist.
	refusal := func(c Command, id uint64) string {
		t.Helper()
		err := h.apply(c).Err
		if err == nil {
			t.Fatalf("%T naming job %d was accepted", c, id)
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Kind != KindNotFound {
			t.Fatalf("%T naming job %d: %v, not a NotFound refusal", c, id, err)
		}
		// The job's id where it names the job: after "job " or a
		// dependency type's ':', not an element's index.
		return regexp.MustCompile(fmt.Sprintf(`(job |:)%d([^0-9]|$)`, id)).ReplaceAllString(err.Error(), "${1}N${2}")
	}
	as := func(c *SubmitJob) *SubmitJob { c.DependencyViewer = "ann"; return c }
	update := func(dep string) *UpdateJob {
		return &UpdateJob{JobID: own, Dependency: &dep, DependencyViewer: "ann"}
	}
	for _, form := range []string{"afterok:%d", "afterany:%d_1", "after:%d_7"} {
		seen := refusal(as(depJob("a", fmt.Sprintf(form, bobs), 1)), bobs)
		if none := refusal(as(depJob("a", fmt.Sprintf(form, unknown), 1)), unknown); seen != none {
			t.Errorf("dependency %s on bob's job: %q; on no job: %q", form, seen, none)
		}
		seen = refusal(update(fmt.Sprintf(form, bobs)), bobs)
		if none := refusal(update(fmt.Sprintf(form, unknown)), unknown); seen != none {
			t.Errorf("update to %s on bob's job: %q; on no job: %q", form, seen, none)
		}
	}
	if after := balance(t, h); after != before {
		t.Fatalf("refused submissions changed the balance: %+v → %+v", before, after)
	}
	if j, _ := h.f.Job(own); j.Dependency != "" {
		t.Fatalf("a refused update changed the job's dependency to %q", j.Dependency)
	}
	// ann's own jobs, and anyone's without a viewer.
	h.ok(as(depJob("mine", fmt.Sprintf("afterok:%d", own), 1)))
	h.ok(depJob("admin's", fmt.Sprintf("afterok:%d", bobs), 1))
}
