package fsm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// gangSetup is setup with four 8-core nodes n1..n4.
func gangSetup(h *harness, sus ledger.SU) {
	h.t.Helper()
	h.setup(sus)
	for _, id := range []string{"n2", "n3", "n4"} {
		h.ok(&NodeUp{ID: id, Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	}
}

func wideJob(nodes int, cpu float64) *SubmitJob {
	return &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": cpu}, Nodes: nodes, Tasks: 1,
		Walltime: time.Hour, Command: []string{"mpirun ./a.out"}, CheckFit: true}
}

func freeCPU(t *testing.T, h *harness) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, n := range h.f.Nodes() {
		out[n.ID] = n.Free["cpu"]
	}
	return out
}

// The first report: a job asking for more than any node has (or
// more nodes than exist) is refused at submission, holds nothing, and says
// what the largest job that fits is; bad node counts are refused as such.
func TestParallelJobShapesThatCannotFitAreRefused(t *testing.T) {
	h := newHarness(t)
	gangSetup(h, 1000)
	before := balance(t, h)
	for _, c := range []struct {
		cmd  *SubmitJob
		want string
	}{
		{wideJob(5, 4), "only 4 known nodes can hold that: ask for at most 4 nodes"},
		{wideJob(2, 16), "no known node has cpu=16"},
		{wideJob(-1, 1), "nodes is -1"},
		{wideJob(MaxNodesPerJob+1, 1), fmt.Sprintf("nodes is %d", MaxNodesPerJob+1)},
	} {
		// Malformed commands are refused before they are logged (Encode);
		// the rest when applied.
		_, err := Encode(h.now, c.cmd)
		if err == nil {
			err = h.apply(c.cmd).Err
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("nodes=%d cpu=%v: got %v, want a refusal containing %q", c.cmd.Nodes, c.cmd.Demand["cpu"], err, c.want)
		}
	}
	if after := balance(t, h); after != before {
		t.Fatalf("refused submissions changed the balance: %+v → %+v", before, after)
	}
	// The widest that fits is accepted, and holds the whole allocation.
	info := h.ok(wideJob(4, 8)).(JobInfo)
	single := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 8}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	if info.Hold != 4*single.Hold || info.Nodes != 4 {
		t.Fatalf("4-node job holds %v (nodes %d); one node of it alone holds %v: want 4×", info.Hold, info.Nodes, single.Hold)
	}
}

// A parallel task's placement is applied whole or dropped whole.
func TestParallelPlacementIsAllOrNothing(t *testing.T) {
	h := newHarness(t)
	gangSetup(h, 1000)
	h.ok(wideJob(3, 6))
	h.ok(&NodeDown{ID: "n4"})
	before := freeCPU(t, h)
	for _, c := range []struct {
		nodes []string
		why   string
	}{
		{[]string{"n1", "n2"}, "lists 2 nodes and the job's tasks span 3"},
		{[]string{"n1", "n2", "n4"}, "node n4 is down"},
	} {
		res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: c.nodes[0], Nodes: c.nodes}}}).(*AssignResult)
		if len(res.Accepted) != 0 || len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0].Reason, c.why) {
			t.Fatalf("placement on %v: %+v, want it dropped because %q", c.nodes, res, c.why)
		}
		if after := freeCPU(t, h); !mapsEqual(before, after) {
			t.Fatalf("a dropped placement took resources: %v → %v", before, after)
		}
	}
	if _, err := Encode(h.now, &Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Nodes: []string{"n1", "n1", "n2"}}}}); err == nil {
		t.Fatal("a placement listing a node twice was accepted")
	}
	// Someone else's task takes n3's cores: the gang no longer fits there.
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "n3"}}})
	before = freeCPU(t, h)
	res := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Nodes: []string{"n1", "n2", "n3"}}}}).(*AssignResult)
	if len(res.Accepted) != 0 || !mapsEqual(before, freeCPU(t, h)) {
		t.Fatalf("a gang whose third node is full was applied in part: %+v, free %v → %v", res, before, freeCPU(t, h))
	}
	h.ok(&NodeUp{ID: "n4", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	res = h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n4", Nodes: []string{"n4", "n1", "n2"}}}}).(*AssignResult)
	if len(res.Accepted) != 1 || !slices.Equal(res.Accepted[0].Nodes, []string{"n4", "n1", "n2"}) {
		t.Fatalf("a gang that fits was not applied: %+v", res)
	}
	free := freeCPU(t, h)
	if free["n1"] != 2 || free["n2"] != 2 || free["n4"] != 2 || free["n3"] != 4 {
		t.Fatalf("free cpu after the gang: %v, want 2 on n1, n2, n4 and n3 untouched at 4", free)
	}
}

// Losing one node of a running parallel task loses it on every node,
// charges its whole allocation once, frees every node and requeues it
// whole.
func TestParallelTaskLostWithOneNode(t *testing.T) {
	h := newHarness(t)
	gangSetup(h, 1000)
	h.ok(wideJob(3, 8))
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Nodes: []string{"n1", "n2", "n3"}}}})
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	h.at(30 * time.Minute)
	h.ok(&NodeDown{ID: "n2"})
	free := freeCPU(t, h)
	if free["n1"] != 8 || free["n3"] != 8 {
		t.Fatalf("after n2 went down the other nodes still hold the lost task: %v", free)
	}
	c := charges(h)
	if len(c) != 1 {
		t.Fatalf("%d charges, want 1", len(c))
	}
	// 3 nodes × 8 cores × 30 min, priced as every charge is.
	set := h.f.st.settings
	alloc := ledger.NewVector(len(set.Resources))
	alloc[slices.Index(set.Resources, "cpu")] = 24
	wantCost, err := ledger.Cost(30*time.Minute, alloc, set.BillingWeights, set.BillingRule)
	if err != nil {
		t.Fatal(err)
	}
	if c[0].Amount != wantCost && -c[0].Amount != wantCost {
		t.Fatalf("charged %v, want %v (the whole allocation for 30 min)", c[0].Amount, wantCost)
	}
	info, err := h.f.Job(1)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != 1 || info.Running != 0 {
		t.Fatalf("job after losing a node: %d pending, %d running; want the task requeued whole", info.Pending, info.Running)
	}
	// A late exit report from the head is ignored: charged once.
	r := h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Hour)}}).(*EventsResult)
	if r.Applied != 0 || len(charges(h)) != 1 {
		t.Fatalf("a late exit of the lost attempt was applied: %+v", r)
	}
}

// A property: random wide, narrow and exclusive jobs, random placements
// (some of them stale or on nodes going down) and node losses; after
// every command, each node's free resources are its capacity less exactly
// the per-node demand of the active attempts that list it, every active
// attempt holds all the nodes its job asks for, and a node an exclusive
// attempt holds holds nothing else.
func TestParallelPlacementsNeverHalfCommit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := newHarness(t)
	h.setup(1_000_000)
	nodes := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	for _, id := range nodes[1:] {
		h.ok(&NodeUp{ID: id, Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	}
	jobs, gangsSeen, exclusiveSeen := 0, 0, 0
	step := time.Duration(0)
	for i := range 600 {
		step += time.Second
		h.at(step)
		switch op := r.IntN(10); {
		case op < 3:
			h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": float64(1 + r.IntN(8))},
				Nodes: r.IntN(5), Tasks: int64(1 + r.IntN(3)), Walltime: time.Hour, Command: []string{"x"}, Exclusive: r.IntN(4) == 0})
			jobs++
		case op < 7 && jobs > 0:
			var ps []TaskPlacement
			for range 1 + r.IntN(4) {
				w := 1 + r.IntN(4)
				perm := r.Perm(len(nodes))[:w]
				p := TaskPlacement{JobID: uint64(1 + r.IntN(jobs)), Task: int64(r.IntN(3)), Node: nodes[perm[0]]}
				if w > 1 {
					for _, k := range perm {
						p.Nodes = append(p.Nodes, nodes[k])
					}
				}
				ps = append(ps, p)
			}
			h.ok(&Assign{Placements: ps})
		case op < 8:
			h.ok(&NodeDown{ID: nodes[r.IntN(len(nodes))]})
		case op < 9:
			h.ok(&NodeUp{ID: nodes[r.IntN(len(nodes))], Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
		default:
			var evs []TaskEvent
			for _, ti := range h.f.Running("") {
				if r.IntN(2) == 0 {
					evs = append(evs, exited(ti.JobID, ti.Task, ti.Attempt, 0, time.Second))
				}
			}
			if len(evs) > 0 {
				h.ok(&TaskEvents{Events: evs})
			}
		}
		checkGangInvariant(t, i, h)
		for _, ti := range h.f.Running("") {
			if len(ti.Nodes) > 1 {
				gangsSeen++
			}
			if h.f.st.jobs[ti.JobID].Exclusive {
				exclusiveSeen++
			}
		}
	}
	if gangsSeen == 0 || exclusiveSeen == 0 {
		t.Fatalf("%d parallel and %d exclusive tasks were seen running: the property was not exercised", gangsSeen, exclusiveSeen)
	}
}

func checkGangInvariant(t *testing.T, step int, h *harness) {
	t.Helper()
	st := h.f.st
	held := map[string]float64{}
	for _, a := range st.running {
		j := st.jobs[a.Job]
		for _, n := range a.allNodes() {
			if j.Exclusive && len(st.nodes[n].tasks) != 1 {
				t.Fatalf("step %d: node %s holds %d tasks, one of them exclusive job %d's", step, n, len(st.nodes[n].tasks), a.Job)
			}
		}
		if got, want := len(a.allNodes()), max(j.Nodes, 1); got != want {
			t.Fatalf("step %d: attempt of job %d holds %d nodes, its job spans %d", step, a.Job, got, want)
		}
		for _, n := range a.allNodes() {
			held[n] += a.nodeDemand()[0]
			if _, ok := st.nodes[n].tasks[taskID{a.Job, a.Task}]; !ok {
				t.Fatalf("step %d: node %s does not list the task of job %d it holds", step, n, a.Job)
			}
		}
	}
	for id, nd := range st.nodes {
		if got, want := nd.free[0], nd.rec.Capacity[0]-held[id]; got != want {
			t.Fatalf("step %d: node %s free cpu %v, want capacity %v less what its attempts hold (%v)", step, id, got, nd.rec.Capacity[0], held[id])
		}
		if !nd.rec.Up && len(nd.tasks) > 0 {
			t.Fatalf("step %d: down node %s still holds %d tasks", step, id, len(nd.tasks))
		}
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
