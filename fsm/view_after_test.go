package fsm

import (
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/sched"
)

// The leader schedules on ViewAfter while task ends are on their way
// through the log. The view must give back exactly what the ending
// attempts hold (on their node, and in their account's allocation), nothing
// for starts, unknown or stale attempts and repeats; and an Assign built
// on that view must never hold a node twice, whichever order the log
// brings it and the ends in.
func TestViewAfterGivesBackWhatEndingAttemptsHold(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 3}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 1, Walltime: time.Hour, Command: []string{"y"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})

	before := h.f.View(h.now)
	cpu := slices.Index(before.Resources, "cpu")
	freeCPU := func(v *sched.View) float64 { return v.Nodes[0].Free[cpu] }
	heldCPU := func(v *sched.View) float64 { return v.Accounts[0].Running[cpu] }
	if freeCPU(before) != 2 || heldCPU(before) != 6 {
		t.Fatalf("before: free %v, held %v; want 2 and 6", freeCPU(before), heldCPU(before))
	}
	end := exited(1, 0, 1, 0, time.Minute)
	for _, c := range []struct {
		name       string
		events     []TaskEvent
		free, held float64
	}{
		{"no events", nil, 2, 6},
		{"a start", []TaskEvent{{JobID: 1, Task: 1, Attempt: 1, Kind: TaskStarted}}, 2, 6},
		{"an end", []TaskEvent{end}, 5, 3},
		{"the same end twice", []TaskEvent{end, end}, 5, 3},
		{"a lost attempt", []TaskEvent{{JobID: 1, Task: 1, Attempt: 1, Kind: TaskLost}}, 5, 3},
		{"both", []TaskEvent{end, exited(1, 1, 1, 1, time.Minute)}, 8, 0},
		{"a stale attempt", []TaskEvent{exited(1, 0, 2, 0, time.Minute)}, 2, 6},
		{"an unknown job", []TaskEvent{exited(9, 0, 1, 0, time.Minute)}, 2, 6},
	} {
		v := h.f.ViewAfter(h.now, c.events)
		if freeCPU(v) != c.free || heldCPU(v) != c.held {
			t.Errorf("%s: free %v, held %v; want %v and %v", c.name, freeCPU(v), heldCPU(v), c.free, c.held)
		}
		if want := 2 - int(c.free-2)/3; len(v.Nodes[0].Releases) != want {
			t.Errorf("%s: %d releases, want %d (one per attempt that still runs)", c.name, len(v.Nodes[0].Releases), want)
		}
	}

	// Job 2's 4 cpu fit only once task 0 has ended. An Assign built on the
	// view after its end, applied before the end: dropped, not squeezed in.
	v := h.f.ViewAfter(h.now, []TaskEvent{end})
	early, err := AssignFor(v, []sched.Placement{{Account: 0, Job: slices.IndexFunc(v.Accounts[0].Queue, func(j sched.Job) bool { return j.ID == 2 }), Node: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.ok(early).(*AssignResult); len(r.Accepted) != 0 || len(r.Dropped) != 1 {
		t.Fatalf("an Assign that overtook the end it counted on was applied: %+v", r)
	}
	if got := h.f.View(h.now); freeCPU(got) != 2 {
		t.Fatalf("free cpu %v after the dropped Assign, want 2", freeCPU(got))
	}
	// In its order, after the end: accepted, and the node is full.
	h.ok(&TaskEvents{Events: []TaskEvent{end}})
	if r := h.ok(early).(*AssignResult); len(r.Accepted) != 1 {
		t.Fatalf("the Assign after the end it counted on was dropped: %+v", r)
	}
	if got := h.f.View(h.now); freeCPU(got) != 1 || heldCPU(got) != 7 {
		t.Fatalf("after the end and the Assign: free %v, held %v; want 1 and 7", freeCPU(got), heldCPU(got))
	}
}
