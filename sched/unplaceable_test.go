package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// oneAccountView is one account, "A", with the given queue on the given nodes
// (each idle unless free says otherwise), under policy.
func oneAccountView(policy Policy, nodes []Node, queue ...Job) *View {
	n := len(nodes[0].Capacity)
	for i := range nodes {
		if nodes[i].Free == nil {
			nodes[i].Free = nodes[i].Capacity.Clone()
		}
	}
	s := DefaultSettings()
	s.Policy = policy
	return &View{
		Resources: []string{"cpu", "mem", "mic"}[:n],
		Nodes:     nodes,
		Accounts: []Account{{Name: "A", Weight: 1, Running: ledger.NewVector(n), Usage: ledger.NewVector(n),
			Baseline: ledger.NewVector(n), BaselineRate: ledger.NewVector(n), Queue: queue}},
		Settings: s,
	}
}

// placedPerJob counts the placements of each job of account 0.
func placedPerJob(ps []Placement, jobs int) []int {
	n := make([]int, jobs)
	for _, p := range ps {
		n[p.Job]++
	}
	return n
}

// A job that no up node can hold, even idle, must not hold back the jobs
// its account submitted after it: waiting cannot make it start. Under
// every policy the later job is placed and the oversized one stays
// pending. The multi-resource case fits the per-resource maxima of the
// nodes (cpu 32, mic 4) but no single node.
func TestJobNoNodeCanHoldDoesNotBlockItsAccount(t *testing.T) {
	cases := []struct {
		name  string
		nodes func() []Node
		big   ledger.Vector
		small ledger.Vector
	}{
		{"cpu=5 on 4-cpu nodes", func() []Node {
			return []Node{{ID: "a", Capacity: ledger.Vector{4, 16, 0}}, {ID: "b", Capacity: ledger.Vector{4, 16, 0}}}
		}, ledger.Vector{5, 1, 0}, ledger.Vector{1, 1, 0}},
		{"mic=100 on nodes with 2 mic", func() []Node {
			return []Node{{ID: "a", Capacity: ledger.Vector{4, 16, 2}}, {ID: "b", Capacity: ledger.Vector{4, 16, 0}}}
		}, ledger.Vector{1, 1, 100}, ledger.Vector{1, 1, 0}},
		{"mic on nodes without mic", func() []Node {
			return []Node{{ID: "a", Capacity: ledger.Vector{4, 16, 0}}}
		}, ledger.Vector{1, 1, 1}, ledger.Vector{1, 1, 0}},
		{"cpu=16 mic=1 on cpu=32 and cpu=8 mic=4 nodes", func() []Node {
			return []Node{{ID: "fat", Capacity: ledger.Vector{32, 128, 0}}, {ID: "mic", Capacity: ledger.Vector{8, 96, 4}}}
		}, ledger.Vector{16, 1, 1}, ledger.Vector{1, 1, 0}},
	}
	for _, c := range cases {
		for _, policy := range Policies() {
			t.Run(fmt.Sprintf("%s/%s", c.name, policy), func(t *testing.T) {
				v := oneAccountView(policy, c.nodes(),
					Job{ID: 1, Demand: c.big, Pending: 3},
					Job{ID: 2, Demand: c.small, Pending: 2})
				got := placedPerJob(schedule(t, v), 2)
				if got[0] != 0 || got[1] != 2 {
					t.Fatalf("placed %v tasks of the oversized job and the job behind it, want [0 2]: the job behind must not wait for one no node can hold", got)
				}
			})
		}
	}
}

// Passing over oversized jobs must not change queue order otherwise: a job
// that fits an idle node but not what is free now keeps blocking the jobs
// behind it (a big job is not starved by a stream of small ones), however
// many oversized jobs precede it.
func TestJobThatFitsAnIdleNodeStillBlocks(t *testing.T) {
	for _, policy := range Policies() {
		t.Run(string(policy), func(t *testing.T) {
			nodes := []Node{{ID: "a", Capacity: ledger.Vector{4, 16, 0}, Free: ledger.Vector{3, 16, 0}}}
			v := oneAccountView(policy, nodes,
				Job{ID: 1, Demand: ledger.Vector{5, 1, 0}, Pending: 1}, // no node holds it: passed over
				Job{ID: 2, Demand: ledger.Vector{4, 1, 0}, Pending: 1}, // fits the node, not what is free
				Job{ID: 3, Demand: ledger.Vector{1, 1, 0}, Pending: 2})
			if ps := schedule(t, v); len(ps) != 0 {
				t.Fatalf("placed %v: job 3 overtook job 2, which fits an idle node and must keep its place", placedPerJob(ps, 3))
			}
			// Once the node is idle, job 2 starts first.
			v.Nodes[0].Free = v.Nodes[0].Capacity.Clone()
			ps := schedule(t, v)
			if len(ps) == 0 || ps[0].Job != 1 {
				t.Fatalf("placements %+v on the idle node, want job 2 (index 1) first", ps)
			}
		})
	}
}

// The Pareto set of node shapes answers exactly what a scan of every node
// answers.
func TestShapesHoldExactlyWhatSomeNodeHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 7))
	for iter := range 300 {
		v := randomView(r, HMRF, Affinity)
		var s ledger.Shapes
		for i := range v.Nodes {
			s = s.Add(v.Nodes[i].Capacity)
		}
		if len(s) > len(v.Nodes) {
			t.Fatalf("iteration %d: %d shapes for %d nodes", iter, len(s), len(v.Nodes))
		}
		for range 50 {
			d := ledger.Vector{float64(r.IntN(80)), float64(r.IntN(600)), float64(r.IntN(6))}
			if got, want := s.Holds(d), someNodeHolds(v, d); got != want {
				t.Fatalf("iteration %d: shapes %v hold %v: %v, a scan of the nodes says %v", iter, s, d, got, want)
			}
		}
	}
}
