package fsm

import (
	"testing"
	"time"
)

// A node that goes down keeping its attempts takes no new tasks, but its
// running attempts stay active (its worker may still run them) until a
// later NodeDown loses them, charged up to when they were fenced; a worker
// that reports a fenced attempt first is charged the runtime it measured,
// and nothing is charged twice.
func TestNodeDownKeepsAttemptsUntilTheyAreLost(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, {JobID: 1, Task: 1, Attempt: 1, Kind: TaskStarted}}})
	h.at(10 * time.Minute)
	res := h.ok(&NodeDown{ID: "n1", Reason: "unreachable", KeepAttempts: true}).(*NodeResult)
	if res.Lost != 0 || res.Node.Up || res.Node.Running != 2 {
		t.Fatalf("node down keeping attempts = %+v; want down with 2 running, none lost", res)
	}
	if a, _ := h.f.Attempt(1, 0, 1); a.State != TaskRunning {
		t.Fatalf("attempt on the down node is %v, want still running", a.State)
	}
	// Nothing new goes there.
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}}).(*AssignResult); len(r.Accepted) != 0 {
		t.Fatalf("a task was placed on a down node: %+v", r)
	}
	// Repeating it changes nothing.
	if r := h.ok(&NodeDown{ID: "n1", KeepAttempts: true}).(*NodeResult); r.Lost != 0 || r.Node.Running != 2 {
		t.Fatalf("second keeping NodeDown = %+v", r)
	}
	// The worker, back for a moment, reports task 1 fenced after 12
	// minutes: charged exactly that.
	h.at(14 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 1, Attempt: 1, Kind: TaskLost, Runtime: 12 * time.Minute}}})
	if a, _ := h.f.Attempt(1, 1, 1); a.State != TaskLostState || a.Runtime != 12*time.Minute || a.Charged != suFor(12*time.Minute) {
		t.Fatalf("reported fenced attempt = %+v; want lost, charged for the 12 minutes it ran", a)
	}
	// The leader then loses the rest, fenced at 13 minutes.
	h.at(20 * time.Minute)
	res = h.ok(&NodeDown{ID: "n1", Reason: "fenced", FailedAt: t0.Add(13 * time.Minute)}).(*NodeResult)
	if res.Lost != 1 || res.Node.Running != 0 || res.Node.Up {
		t.Fatalf("losing the down node's attempts = %+v; want the one left lost", res)
	}
	a0, _ := h.f.Attempt(1, 0, 1)
	if a0.State != TaskLostState || a0.Runtime != 13*time.Minute || a0.Charged <= suFor(12*time.Minute) {
		t.Fatalf("lost attempt = %+v; want charged up to the fence at 13 minutes", a0)
	}
	// A late report about either changes nothing.
	r := h.ok(&TaskEvents{Events: []TaskEvent{
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskLost, Runtime: 13 * time.Minute},
		{JobID: 1, Task: 1, Attempt: 1, Kind: TaskExited, Runtime: 14 * time.Minute},
	}}).(*EventsResult)
	if r.Applied != 0 {
		t.Fatalf("late reports applied: %+v", r)
	}
	a1, _ := h.f.Attempt(1, 1, 1)
	if j, _ := h.f.Job(1); j.Charged != a0.Charged+a1.Charged {
		t.Fatalf("job charged %d, want %d (12 + 13 minutes, once each)", j.Charged, a0.Charged+a1.Charged)
	}
}
