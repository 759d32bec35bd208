package fsm

import (
	"testing"
	"time"
)

// Attempt reads any attempt of a task, not only the latest.
func TestAttemptReadsEveryAttempt(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 1}})
	h.ok(&NodeDown{ID: "n1"})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n2"}}})
	first, err := h.f.Attempt(1, 0, 1)
	if err != nil || first.Node != "n1" || first.State != TaskLostState {
		t.Fatalf("attempt 1 = %+v, %v; want lost on n1", first, err)
	}
	second, err := h.f.Attempt(1, 0, 2)
	if err != nil || second.Node != "n2" || second.State != TaskAssigned {
		t.Fatalf("attempt 2 = %+v, %v; want assigned on n2", second, err)
	}
	if _, err := h.f.Attempt(1, 0, 3); KindOf(err) != KindNotFound {
		t.Fatalf("attempt 3: err = %v, want NotFound", err)
	}
}
