package sched

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// samePlacement reports whether two placements put the same task on the
// same nodes.
func samePlacement(a, b Placement) bool {
	return a.Account == b.Account && a.Job == b.Job && a.Task == b.Task && a.Node == b.Node && slices.Equal(a.Nodes, b.Nodes)
}

// gangView is randomView with some jobs made parallel: 2 to 6 nodes of
// a per-node demand, their Demand the whole allocation.
func gangView(r *rand.Rand, policy Policy, placement PlacementStrategy) *View {
	v := randomView(r, policy, placement)
	for a := range v.Accounts {
		for j := range v.Accounts[a].Queue {
			job := &v.Accounts[a].Queue[j]
			if r.IntN(3) != 0 {
				continue
			}
			spanNodes(job, 2+r.IntN(5))
		}
	}
	return v
}

// spanNodes makes job parallel: each task spans nodes nodes, its demand
// on each, its Demand the whole allocation.
func spanNodes(job *Job, nodes int) {
	job.Nodes = nodes
	job.PerNode = job.Demand
	job.Demand = job.PerNode.Clone()
	for k := range job.Demand {
		job.Demand[k] *= float64(nodes)
	}
}

// TestGangsArePlacedWholeOnDistinctNodes: under every policy and
// placement strategy, every task of a parallel job gets exactly its
// number of distinct nodes, each holding its per-node demand within what
// is free, one-node tasks likewise fit, and a fresh engine places the
// same (deterministic).
func TestGangsArePlacedWholeOnDistinctNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	gangs := 0
	for iter := range 400 {
		policy := Policies()[iter%len(Policies())]
		placement := []PlacementStrategy{Affinity, BestFit, Spread}[iter%3]
		v := gangView(r, policy, placement)
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d (%s): %v", iter, policy, err)
		}
		free := make([]ledger.Vector, len(v.Nodes))
		for i := range v.Nodes {
			free[i] = v.Nodes[i].Free.Clone()
		}
		for _, p := range ps {
			job := &v.Accounts[p.Account].Queue[p.Job]
			nodes := []int{p.Node}
			per := job.Demand
			if job.Nodes > 1 {
				gangs++
				nodes, per = p.Nodes, job.PerNode
				if len(nodes) != job.Nodes || nodes[0] != p.Node {
					t.Fatalf("iteration %d (%s): job %d wants %d nodes, placed on %v (head %d)", iter, policy, job.ID, job.Nodes, nodes, p.Node)
				}
				sorted := slices.Clone(nodes)
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != len(nodes) {
					t.Fatalf("iteration %d (%s): job %d placed twice on one node: %v", iter, policy, job.ID, nodes)
				}
			} else if p.Nodes != nil {
				t.Fatalf("iteration %d (%s): one-node job %d got a node list %v", iter, policy, job.ID, p.Nodes)
			}
			for _, n := range nodes {
				if !free[n].Fits(per) {
					t.Fatalf("iteration %d (%s): job %d overcommits node %d: free %v, per node %v", iter, policy, job.ID, n, free[n], per)
				}
				free[n].Sub(per)
			}
		}
		again, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(ps, again, samePlacement) {
			t.Fatalf("iteration %d (%s): two engines placed the same view differently", iter, policy)
		}
	}
	if gangs == 0 {
		t.Fatal("no parallel task was ever placed: the test checks nothing")
	}
}

// TestGangThatDoesNotFitChangesNothing: a 3-node job on a cluster with two
// free nodes is not placed, takes nothing, and the other account's
// one-node tasks fill both nodes as if the gang had never been tried.
func TestGangThatDoesNotFitChangesNothing(t *testing.T) {
	node := func(id string, free float64) Node {
		return Node{ID: id, Capacity: ledger.Vector{4}, Free: ledger.Vector{free}}
	}
	v := &View{
		Resources: []string{"cpu"},
		Settings:  Settings{Policy: DRF, Quantum: time.Minute, Placement: BestFit},
		Nodes:     []Node{node("a", 4), node("b", 4), node("c", 0)},
		Accounts: []Account{
			{Name: "wide", Weight: 1, Running: ledger.Vector{4}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{0},
				Queue: []Job{{ID: 1, Nodes: 3, PerNode: ledger.Vector{4}, Demand: ledger.Vector{12}, Pending: 1}}},
			{Name: "narrow", Weight: 1, Running: ledger.Vector{8}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{0},
				Queue: []Job{{ID: 2, Demand: ledger.Vector{1}, Pending: 100}}},
		},
	}
	ps, err := NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[int]int{}
	for _, p := range ps {
		if p.Account == 0 {
			t.Fatalf("the 3-node job was placed on a cluster with 2 free nodes: %+v", p)
		}
		perNode[p.Node]++
	}
	if len(ps) != 8 || perNode[0] != 4 || perNode[1] != 4 {
		t.Fatalf("narrow tasks placed %d (per node %v), want 4 on each free node", len(ps), perNode)
	}

	// With the third node free the gang runs, ranked first (less running),
	// and the narrow account gets what is left: nothing.
	v.Nodes[2].Free = ledger.Vector{4}
	ps, err = NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 || ps[0].Account != 0 || len(ps[0].Nodes) != 3 {
		t.Fatalf("first placement %+v, want the 3-node job on 3 nodes", ps)
	}
	if len(ps) != 1 {
		t.Fatalf("%d placements, want only the gang (it takes all 12 cores)", len(ps))
	}
}

// TestGangCountsWholeAllocationInFairness: under drf an account running
// one 4-node job ranks after an account running 2 one-node tasks of the
// same per-node size, because its share is the whole allocation.
func TestGangCountsWholeAllocationInFairness(t *testing.T) {
	nodes := make([]Node, 8)
	for i := range nodes {
		nodes[i] = Node{ID: string(rune('a' + i)), Capacity: ledger.Vector{4}, Free: ledger.Vector{4}}
	}
	acct := func(name string, job Job) Account {
		return Account{Name: name, Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{0}, Queue: []Job{job}}
	}
	v := &View{
		Resources: []string{"cpu"},
		Settings:  Settings{Policy: DRF, Quantum: time.Minute, Placement: BestFit},
		Nodes:     nodes,
		Accounts: []Account{
			acct("wide", Job{ID: 1, Nodes: 4, PerNode: ledger.Vector{4}, Demand: ledger.Vector{16}, Pending: 2}),
			acct("narrow", Job{ID: 2, Demand: ledger.Vector{4}, Pending: 8}),
		},
	}
	ps, err := NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	// drf: wide takes 16 of 32 first (tie to the first account), then
	// narrow is served until its share reaches wide's: 4 nodes.
	var order []int
	for _, p := range ps {
		order = append(order, p.Account)
	}
	want := []int{0, 1, 1, 1, 1}
	if !slices.Equal(order, want) {
		t.Fatalf("accounts served %v, want %v: a 4-node task must count 16 cores in drf's share", order, want)
	}
}
