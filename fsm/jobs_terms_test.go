package fsm

import (
	"strings"
	"testing"
	"time"
)

// offeredTasks is how many tasks of job id the scheduler's view offers at now.
func offeredTasks(h *harness, id uint64) int {
	n := 0
	for _, a := range h.f.View(h.now).Accounts {
		for _, j := range a.Queue {
			if j.ID == id {
				n += j.Pending
			}
		}
	}
	return n
}

// A throttle lets at most N of a job's tasks run at once: the view
// offers only what it leaves, and the FSM drops a placement past it.
func TestThrottleBoundsRunningTasks(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	c := depJob("array", "", 5)
	c.Throttle = 2
	h.ok(c)
	if n := offeredTasks(h, 1); n != 2 {
		t.Fatalf("a 5-task job throttled to 2 offers %d tasks", n)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	if n := offeredTasks(h, 1); n != 0 {
		t.Fatalf("with 2 running the throttled job offers %d more", n)
	}
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !strings.Contains(res.Dropped[0].Reason, "throttle") {
		t.Fatalf("a third task past the throttle: %+v", res)
	}
	if j, _ := h.f.Job(1); j.WaitKind != WaitThrottle {
		t.Fatalf("the throttled job says it waits for %q (%s)", j.Waiting, j.WaitKind)
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, exited(1, 0, 1, 0, time.Minute)}})
	if n := offeredTasks(h, 1); n != 1 {
		t.Fatalf("after one of 2 ended the throttled job offers %d", n)
	}
}

// No task starts before the job's begin time.
func TestBeginTime(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	c := depJob("later", "", 1)
	c.Begin = h.now.Add(time.Hour)
	h.ok(c)
	if offeredTasks(h, 1) != 0 {
		t.Fatal("a job whose begin time has not come is offered")
	}
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !strings.Contains(res.Dropped[0].Reason, "begin time") {
		t.Fatalf("a placement before the begin time: %+v", res)
	}
	h.at(time.Hour)
	if offeredTasks(h, 1) != 1 {
		t.Fatal("the job is not offered once its begin time has come")
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
}

// A higher nice lets the account's other pending jobs go first; equal
// nice keeps submission order.
func TestNiceOrdersTheAccountsQueue(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	bulk := depJob("bulk", "", 1)
	bulk.Nice = 100
	h.ok(bulk)
	h.ok(depJob("urgent", "", 1))
	h.ok(depJob("next", "", 1))
	var order []uint64
	for _, j := range h.f.View(h.now).Accounts[0].Queue {
		order = append(order, j.ID)
	}
	if len(order) != 3 || order[0] != 2 || order[1] != 3 || order[2] != 1 {
		t.Fatalf("queue order %v; want 2, 3 (nice 0, in submission order) then 1 (nice 100)", order)
	}
	if _, err := Encode(h.now, &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1,
		Walltime: time.Hour, Command: []string{"x"}, Throttle: -1}); err == nil {
		t.Fatal("a negative throttle was accepted")
	}
}

// A held job starts no task until released; its running tasks go on;
// an ended job cannot be held.
func TestHoldAndRelease(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	c := depJob("held", "", 3)
	c.Hold = true
	if info := h.ok(c).(JobInfo); !info.Held || info.WaitKind != WaitHeld {
		t.Fatalf("a job submitted held says held %v, waiting %q", info.Held, info.Waiting)
	}
	if offeredTasks(h, 1) != 0 {
		t.Fatal("a held job is offered")
	}
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !strings.Contains(res.Dropped[0].Reason, "held") {
		t.Fatalf("a placement of the held job: %+v", res)
	}
	h.ok(&HoldJob{JobID: 1})
	if offeredTasks(h, 1) != 3 {
		t.Fatal("the released job is not offered")
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	if info := h.ok(&HoldJob{JobID: 1, Hold: true}).(JobInfo); !info.Held || info.Running != 1 {
		t.Fatalf("holding a running job: held %v, running %d; want held with its task still running", info.Held, info.Running)
	}
	if offeredTasks(h, 1) != 0 {
		t.Fatal("a job held while running still offers its pending tasks")
	}
	h.ok(&CancelJob{JobID: 1})
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, exited(1, 0, 1, 0, time.Minute)}})
	if err := h.apply(&HoldJob{JobID: 1, Hold: true}).Err; err == nil || !strings.Contains(err.Error(), "nothing to hold") {
		t.Fatalf("holding an ended job: %v", err)
	}
	if err := h.apply(&HoldJob{JobID: 99, Hold: true}).Err; KindOf(err) != KindNotFound {
		t.Fatalf("holding an unknown job: %v", err)
	}
}

// An admin's priority puts the job first in its account's queue, marked
// with its boost for the engine, ahead of a lower nice; removing it
// restores submission order.
func TestPriorityBoostsAJobInTheView(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 1))
	h.ok(depJob("b", "", 1))
	first := func() (uint64, int) {
		for _, a := range h.f.View(h.now).Accounts {
			if a.Name == "phys" {
				return a.Queue[0].ID, a.Queue[0].Boost
			}
		}
		t.Fatal("phys has no queue")
		return 0, 0
	}
	if id, boost := first(); id != 1 || boost != 0 {
		t.Fatalf("queue head %d boost %d before any priority, want job 1 unboosted", id, boost)
	}
	h.ok(&UpdateJob{JobID: 1, Nice: ptr(-3)})
	info := h.ok(&UpdateJob{JobID: 2, Priority: ptr(7)}).(JobInfo)
	if info.Priority != 7 {
		t.Fatalf("job 2 has priority %d, want 7", info.Priority)
	}
	if id, boost := first(); id != 2 || boost != 7 {
		t.Fatalf("queue head %d boost %d, want job 2 boosted 7 ahead of job 1's nice -3", id, boost)
	}
	h.ok(&UpdateJob{JobID: 2, Priority: ptr(0)})
	if id, _ := first(); id != 1 {
		t.Fatalf("queue head %d after the boost was removed, want job 1", id)
	}
	if _, err := Encode(h.now, &UpdateJob{JobID: 2, Priority: ptr(-1)}); err == nil || !strings.Contains(err.Error(), "priority is -1") {
		t.Fatalf("priority -1: %v", err)
	}
}
