package fsm

import (
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// A node that failed before it was declared down: its lost attempts are
// charged up to when it failed, not up to when the failure was noticed;
// a failure time before an attempt started charges nothing, and one after
// the declaration changes nothing.
func TestNodeDownChargesUpToTheFailure(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"}}})
	h.at(6 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	h.at(18 * time.Minute)
	res := h.ok(&NodeDown{ID: "n1", Reason: "test", FailedAt: t0.Add(12 * time.Minute)}).(*NodeResult)
	if res.Lost != 3 {
		t.Fatalf("lost %d attempts, want 3", res.Lost)
	}
	// Task 0 started at 6 minutes: 6 minutes of one core. Tasks 1 and 2
	// never reported a start: charged from their placement at 0.
	for task, want := range map[int64]time.Duration{0: 6 * time.Minute, 1: 12 * time.Minute, 2: 12 * time.Minute} {
		a, err := h.f.Attempt(1, task, 1)
		if err != nil || a.Runtime != want || a.State != TaskLostState {
			t.Fatalf("task %d = %+v, %v; want lost after %v", task, a, err, want)
		}
		if wantSU := suFor(want); a.Charged != wantSU {
			t.Fatalf("task %d charged %d, want %d", task, a.Charged, wantSU)
		}
	}
	// Failure times outside the attempt are clamped.
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(30 * time.Minute)
	h.ok(&NodeDown{ID: "n1", FailedAt: t0.Add(time.Minute)})
	if a, _ := h.f.Attempt(1, 0, 2); a.Runtime != 0 {
		t.Fatalf("a failure before the attempt began charged %v", a.Runtime)
	}
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.at(40 * time.Minute)
	h.ok(&NodeDown{ID: "n1", FailedAt: t0.Add(time.Hour)})
	if a, _ := h.f.Attempt(1, 0, 3); a.Runtime != 10*time.Minute {
		t.Fatalf("a failure time after the declaration charged %v, want the 10 minutes to the declaration", a.Runtime)
	}
	if _, err := Encode(h.now, &NodeDown{ID: "n1", FailedAt: -1}); err == nil {
		t.Fatal("a negative failure time was accepted")
	}
}

// suFor is the cost of one core for d (whole minutes here) at 1 SU per
// core-hour.
func suFor(d time.Duration) ledger.SU {
	return su * ledger.SU(d/time.Minute) / 60
}
