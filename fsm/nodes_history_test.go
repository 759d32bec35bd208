package fsm

import (
	"reflect"
	"testing"
	"time"
)

// A node's ups and downs are recorded at their commands' times, with the
// tasks each down lost; a re-announcement of an up node is no transition;
// the history is bounded, and the same on a replica and after a restore.
func TestNodeHistoryRecordsUpsAndDowns(t *testing.T) {
	h := newHarness(t)
	h.setup(1000) // n1 up at t0
	h.ok(depJob("a", "", 1))
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.at(time.Minute)
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}}) // the same again
	h.at(2 * time.Minute)
	h.ok(&NodeDown{ID: "n1"})
	h.at(3 * time.Minute)
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	want := []NodeTransition{{At: t0, Up: true}, {At: t0.Add(2 * time.Minute), Lost: 1}, {At: t0.Add(3 * time.Minute), Up: true}}
	history := func(f *FSM) []NodeTransition {
		for _, n := range f.Nodes() {
			if n.ID == "n1" {
				return n.History
			}
		}
		t.Fatal("n1 is not listed")
		return nil
	}
	if got := history(h.f); !reflect.DeepEqual(got, want) {
		t.Fatalf("n1's history %+v, want %+v", got, want)
	}
	for i := range maxNodeTransitions {
		h.at(time.Duration(4+i) * time.Minute)
		if i%2 == 0 {
			h.ok(&NodeDown{ID: "n1"})
		} else {
			h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
		}
	}
	got := history(h.f)
	if len(got) != maxNodeTransitions || got[len(got)-1].At != h.now || got[0].At == t0 {
		t.Fatalf("after %d more transitions the history holds %d, last at %v; want the last %d", maxNodeTransitions, len(got), got[len(got)-1].At, maxNodeTransitions)
	}

	// A replica applying the same log, and a restored snapshot, hold it.
	b, c := replicaAndRestored(t, h, []int{3, 1, 50})
	for name, f := range map[string]*FSM{"replica": b.f, "restored": c.f} {
		if !reflect.DeepEqual(history(f), got) {
			t.Errorf("the %s's history differs: %+v", name, history(f))
		}
	}
}
