package sched

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// exclusiveView is randomView with some nodes idle and some jobs
// exclusive: their per-node demand a node's capacity, spanning 1 to 3
// nodes.
func exclusiveView(r *rand.Rand, policy Policy, placement PlacementStrategy) *View {
	v := randomView(r, policy, placement)
	for i := range v.Nodes {
		if r.IntN(2) == 0 {
			v.Nodes[i].Free = v.Nodes[i].Capacity.Clone()
		}
	}
	for a := range v.Accounts {
		for j := range v.Accounts[a].Queue {
			job := &v.Accounts[a].Queue[j]
			if r.IntN(2) != 0 {
				continue
			}
			job.Demand = v.Nodes[r.IntN(len(v.Nodes))].Capacity.Clone()
			job.Exclusive = true
			if nodes := 1 + r.IntN(3); nodes > 1 {
				spanNodes(job, nodes)
			}
		}
	}
	return v
}

// An exclusive job's tasks go only on nodes of exactly its class that
// were idle, never on a larger node it would fit, and nothing else goes
// on a node beside them: under every policy, strategy and backfill mode.
func TestExclusiveTasksTakeIdleNodesOfTheirClassWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	placed, refusedLarger := 0, 0
	for iter := range 600 {
		policy := Policies()[iter%len(Policies())]
		placement := []PlacementStrategy{Affinity, BestFit, Spread}[iter%3]
		v := exclusiveView(r, policy, placement)
		v.Settings.Backfill = []Backfill{BackfillGreedy, BackfillEASY, BackfillNone}[iter%3]
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d (%s): %v", iter, policy, err)
		}
		free := make([]ledger.Vector, len(v.Nodes))
		whole := make([]bool, len(v.Nodes))
		for i := range v.Nodes {
			free[i] = v.Nodes[i].Free.Clone()
		}
		for _, p := range ps {
			job := &v.Accounts[p.Account].Queue[p.Job]
			nodes := []int{p.Node}
			if job.Nodes > 1 {
				nodes = p.Nodes
			}
			for _, n := range nodes {
				if whole[n] {
					t.Fatalf("iteration %d (%s): job %d placed on node %d, which an exclusive task holds", iter, policy, job.ID, n)
				}
				if job.Exclusive {
					if !sameVector(v.Nodes[n].Capacity, job.nodeDemand()) || !sameVector(free[n], v.Nodes[n].Capacity) {
						t.Fatalf("iteration %d (%s): exclusive job %d of class %v placed on node %d of capacity %v with %v free",
							iter, policy, job.ID, job.nodeDemand(), n, v.Nodes[n].Capacity, free[n])
					}
					whole[n] = true
					placed++
				}
				free[n].Sub(job.nodeDemand())
			}
		}
		// Was an exclusive job left waiting while a larger idle node it
		// fits was free? That is what it must not take.
		for a := range v.Accounts {
			for _, job := range v.Accounts[a].Queue {
				if !job.Exclusive {
					continue
				}
				for n := range v.Nodes {
					if !whole[n] && free[n].Fits(job.nodeDemand()) && !sameVector(v.Nodes[n].Capacity, job.nodeDemand()) {
						refusedLarger++
						break
					}
				}
			}
		}
	}
	if placed == 0 || refusedLarger == 0 {
		t.Fatalf("the views placed %d exclusive tasks and had %d jobs with a larger node free: the test shows nothing", placed, refusedLarger)
	}
	t.Logf("%d exclusive tasks placed; %d times a larger free node was passed over", placed, refusedLarger)
}

// A wide exclusive job that waits for its class reserves it, and a short
// job backfills only on other nodes: the reserved node is not taken by
// work that would still run at the reservation.
func TestExclusiveJobWaitsForItsClass(t *testing.T) {
	small, large := ledger.Vector{4, 8}, ledger.Vector{16, 64}
	v := &View{
		Now:       ledger.Time(time.Hour),
		Resources: []string{"cpu", "mem"},
		Settings:  Settings{Policy: Policies()[0], Quantum: time.Minute, Placement: BestFit, Backfill: BackfillEASY},
		Nodes: []Node{
			{ID: "big", Capacity: large, Free: large.Clone()},
			{ID: "s1", Capacity: small, Free: small.Clone()},
			{ID: "s2", Capacity: small, Free: ledger.Vector{2, 4},
				Releases: []Release{{At: ledger.Time(2 * time.Hour), Free: ledger.Vector{2, 4}}}},
		},
	}
	wide := Job{ID: 1, Demand: small.Clone(), Exclusive: true, FirstIndex: 0, Pending: 1, Walltime: time.Hour}
	spanNodes(&wide, 2)
	zero := ledger.Vector{0, 0}
	v.Accounts = []Account{{Name: "a", Weight: 1, Running: zero, Usage: zero, Baseline: zero, BaselineRate: zero, Queue: []Job{wide}}}
	e := NewEngine()
	ps, err := e.Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 0 {
		t.Fatalf("the exclusive job of two small nodes started on %v, while only one small node is idle", ps)
	}
	x, err := e.Explain(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	if x.Wait != WaitNoRoom || len(x.Room) != 1 || x.Room[0] != "s1" {
		t.Errorf("explain says wait %v with room on %v; want no room, with only s1 holding it (big does not: it is not of its class)", x.Wait, x.Room)
	}
	if resv, ok := e.LastReservation(); !ok || resv.At != ledger.Time(2*time.Hour) {
		t.Errorf("the exclusive job's reservation is %+v, %v; want one at the release of s2 (2h)", resv, ok)
	}
}
