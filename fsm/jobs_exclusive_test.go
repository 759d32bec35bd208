package fsm

import (
	"strings"
	"testing"
	"time"
)

// exclusiveSetup is setup (n1: 8 cores, 32 GiB) with n2 like it and two
// large nodes, big1 and big2 (32 cores, 128 GiB).
func exclusiveSetup(h *harness) {
	h.t.Helper()
	h.setup(10000)
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	for _, id := range []string{"big1", "big2"} {
		h.ok(&NodeUp{ID: id, Capacity: map[string]float64{"cpu": 32, "mem": 128 << 30}})
	}
}

func exclusiveJob(nodes int, cpu float64) *SubmitJob {
	c := wideJob(nodes, cpu)
	c.Exclusive = true
	return c
}

// An exclusive job takes whole nodes of the cheapest class that holds
// what it asked for: its demand, hold and charge are that class's whole
// capacity, and a shape no class can hold is refused, holding nothing,
// with the classes there are.
func TestExclusiveJobTakesItsClassWhole(t *testing.T) {
	h := newHarness(t)
	exclusiveSetup(h)
	small := h.ok(exclusiveJob(2, 1)).(JobInfo)
	if !small.Exclusive || small.Demand["cpu"] != 8 || small.Demand["mem"] != 32<<30 {
		t.Fatalf("an exclusive job asking 1 core on 2 nodes has demand %v (exclusive %v); want the small class's whole 8 cores and 32 GiB", small.Demand, small.Exclusive)
	}
	whole := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 8, "mem": 32 << 30}, Nodes: 2, Tasks: 1,
		Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	if small.Hold != whole.Hold {
		t.Errorf("the exclusive job holds %v SU, a job asking for the same two whole nodes %v: want the same", small.Hold, whole.Hold)
	}
	if big := h.ok(exclusiveJob(2, 9)).(JobInfo); big.Demand["cpu"] != 32 {
		t.Errorf("an exclusive job asking 9 cores per node got demand %v; want the large class (32 cores)", big.Demand)
	}
	before := balance(t, h)
	for _, c := range []struct {
		cmd  *SubmitJob
		want string
	}{
		{exclusiveJob(3, 9), "no class of known nodes has 3 nodes that each hold cpu=9"},
		{exclusiveJob(5, 1), "2 × cpu=8"},
	} {
		if err := h.apply(c.cmd).Err; err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("nodes=%d cpu=%v: got %v, want a refusal containing %q", c.cmd.Nodes, c.cmd.Demand["cpu"], err, c.want)
		}
	}
	if after := balance(t, h); after != before {
		t.Fatalf("refused exclusive jobs changed the balance: %+v → %+v", before, after)
	}
	// A retried request matches what was asked, not the class it became.
	c := exclusiveJob(2, 1)
	c.RequestID = "x1"
	first := h.ok(c).(JobInfo)
	if again := h.ok(c).(JobInfo); again.ID != first.ID {
		t.Fatalf("a retried exclusive submission made job %d, the first made %d", again.ID, first.ID)
	}
}

// The FSM puts an exclusive task only on idle nodes of its class: a
// larger node, or one of its class running something, is dropped, and
// nothing else fits beside it once placed.
func TestExclusivePlacementOnlyOnIdleNodesOfItsClass(t *testing.T) {
	h := newHarness(t)
	exclusiveSetup(h)
	h.ok(exclusiveJob(2, 1))                                                                                                                    // job 1
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}}) // job 2
	for _, c := range []struct {
		nodes []string
		why   string
	}{
		{[]string{"n1", "big1"}, "node big1 is not of the class"},
		{[]string{"big1", "big2"}, "node big1 is not of the class"},
	} {
		res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: c.nodes[0], Nodes: c.nodes}}}).(*AssignResult)
		if len(res.Accepted) != 0 || len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0].Reason, c.why) {
			t.Fatalf("exclusive placement on %v: %+v, want it dropped because %q", c.nodes, res, c.why)
		}
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "n2"}}})
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Nodes: []string{"n1", "n2"}}}}).(*AssignResult)
	if len(res.Accepted) != 0 {
		t.Fatalf("an exclusive task was placed on n2, where another task runs: %+v", res)
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}, {JobID: 2, Task: 0, Attempt: 1, Kind: TaskExited}}})
	res = h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Nodes: []string{"n1", "n2"}}}}).(*AssignResult)
	if len(res.Accepted) != 1 {
		t.Fatalf("the exclusive task was not placed on the two idle small nodes: %+v", res)
	}
	if free := freeCPU(t, h); free["n1"] != 0 || free["n2"] != 0 {
		t.Fatalf("free cpu after the exclusive task: %v; want n1 and n2 wholly taken", free)
	}
	res = h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 1, Node: "n1"}}}).(*AssignResult)
	if len(res.Accepted) != 0 {
		t.Fatalf("a task was placed beside the exclusive one on n1: %+v", res)
	}
}
