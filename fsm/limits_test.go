package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// Submissions over an account's or a user's limits on jobs, walltime or
// cost are refused with the limit named, holding nothing.
func TestSubmitLimits(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SetLimits{Account: "phys", Limits: Limits{MaxWalltime: 2 * time.Hour, MaxJobs: 2}})
	h.ok(&SetLimits{User: "ann", Limits: Limits{MaxJobSU: 5 * ledger.MicroPerSU}})
	long := depJob("long", "", 1)
	long.Walltime = 3 * time.Hour
	costly := depJob("costly", "", 6) // 6 tasks × 1 core × 1 h
	before := balance(t, h)
	for _, c := range []struct {
		cmd  *SubmitJob
		want string
	}{
		{long, "account phys allows a walltime of at most 2h0m0s (its max_walltime)"},
		{costly, "user ann allows a job to cost at most 5 SU (its max_job_su)"},
	} {
		if err := h.apply(c.cmd).Err; err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a refusal saying %q", c.cmd.Name, err, c.want)
		}
	}
	if after := balance(t, h); after != before {
		t.Fatalf("refused submissions changed the balance: %+v → %+v", before, after)
	}
	h.ok(depJob("one", "", 1))
	h.ok(depJob("two", "", 1))
	if err := h.apply(depJob("three", "", 1)).Err; err == nil || !strings.Contains(err.Error(), "at most 2 jobs not ended (its max_jobs), and has 2") {
		t.Fatalf("a third job over max_jobs 2: %v", err)
	}
	if err := h.apply(&SetLimits{Account: "nope"}).Err; KindOf(err) != KindNotFound {
		t.Fatalf("limits of an unknown account: %v", err)
	}
	if _, err := Encode(h.now, &SetLimits{Account: "phys", User: "ann"}); err == nil {
		t.Fatal("limits for an account and a user at once were accepted")
	}
}

// Running limits: the view offers only what is left under them, the FSM
// drops a placement past them, and the job says which limit holds it.
func TestRunningLimits(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SetLimits{User: "ann", Limits: Limits{MaxRunningTasks: 3}})
	h.ok(depJob("a", "", 2))
	h.ok(depJob("b", "", 5))
	if a, b := offeredTasks(h, 1), offeredTasks(h, 2); a+b != 3 || a != 2 {
		t.Fatalf("under a limit of 3 running tasks the view offers %d of job 1 and %d of job 2; want 2 and 1", a, b)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1"}}})
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 1, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !strings.Contains(res.Dropped[0].Reason, "user ann's limit of 3 running tasks") {
		t.Fatalf("a fourth running task: %+v", res)
	}
	if j, _ := h.f.Job(2); j.WaitKind != WaitLimit || !strings.Contains(j.Waiting, "max_running_tasks") {
		t.Fatalf("the limited job says it waits for %q (%s)", j.Waiting, j.WaitKind)
	}
	h.ok(&SetLimits{User: "ann", Limits: Limits{MaxRunningNodes: 4}})
	if n := offeredTasks(h, 2); n != 1 {
		t.Fatalf("a limit of 4 running nodes with 3 running offers %d more tasks, want 1", n)
	}
	h.ok(&SetLimits{User: "ann"})
	if n := offeredTasks(h, 2); n != 4 {
		t.Fatalf("with the limits lifted the job offers %d of its 4 pending tasks", n)
	}
}
