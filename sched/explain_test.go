package sched

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/place"
)

// TestExplainRanksInThePassOrder builds random fairness states where
// every account has one pending task and there is room for all of them,
// so a pass serves the accounts once each in its starting order; Explain
// must rank every account at the place the pass served it.
func TestExplainRanksInThePassOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	capacity := ledger.Vector{64, 256 << 30, 4}
	demand := ledger.Vector{1, 1 << 30, 0}
	for _, policy := range []Policy{DRF, AF, LTDRF, LTAF, LTRF, HMRF, Fawkes, QKnobler} {
		for trial := range 100 {
			n := 2 + rng.IntN(4)
			v := &View{
				Now: ledger.Time(time.Hour), Resources: []string{"cpu", "mem", "mic"},
				Nodes:    []Node{{ID: "n1", Capacity: capacity, Free: capacity.Clone()}},
				Settings: Settings{Policy: policy, Quantum: time.Minute, Placement: place.BestFit, QKnoblerRho: 1},
			}
			if trial%4 == 0 {
				// Some accounts past the time-out go first, longest waiting first.
				v.Settings.Timeout = 10 * time.Minute
			}
			for i := range n {
				a := Account{Name: string(rune('a' + i)), Weight: 0.5 + rng.Float64()*3,
					Running: make(ledger.Vector, 3), Usage: make(ledger.Vector, 3), Baseline: make(ledger.Vector, 3),
					BaselineRate: make(ledger.Vector, 3), Share: 1 / float64(n),
					WaitingSince: ledger.Time(rng.Int64N(int64(time.Hour))),
					Queue:        []Job{{ID: uint64(i + 1), Demand: demand, Pending: 1, Walltime: time.Minute}}}
				for j := range capacity {
					a.Running[j] = float64(rng.IntN(8)) * demand[j]
					a.Usage[j] = rng.Float64() * capacity[j] * 3600
					if rng.IntN(3) > 0 {
						a.Baseline[j] = rng.Float64() * capacity[j] * 3600
					}
				}
				v.Accounts = append(v.Accounts, a)
			}
			e := NewEngine()
			placed, err := e.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(placed) != n {
				t.Fatalf("%s trial %d: the pass placed %d of %d tasks with room for all", policy, trial, len(placed), n)
			}
			for i, p := range placed {
				a := &v.Accounts[p.Account]
				x, err := e.Explain(v, a.Queue[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				if x.Rank != i+1 || x.Ranked != n || !x.KeyExact || x.First != v.Accounts[placed[0].Account].Name {
					t.Fatalf("%s trial %d: the pass served %s %dth of %d (first %s); Explain ranks it %d of %d (first %s, exact %v)",
						policy, trial, a.Name, i+1, n, v.Accounts[placed[0].Account].Name, x.Rank, x.Ranked, x.First, x.KeyExact)
				}
				if x.Wait != WaitRoom || x.Ahead != 0 {
					t.Fatalf("%s trial %d: a task with room waits for %v behind %d tasks", policy, trial, x.Wait, x.Ahead)
				}
			}
		}
	}
}

// explainView is a small cluster: a 4-cpu node and one with a mic, and
// account bio with jobs 1 (no node holds it), 2 and 3; account chem has
// job 4.
func explainView() *View {
	const gib = 1 << 30
	return &View{
		Now: ledger.Time(time.Hour), Resources: []string{"cpu", "mem", "mic", "gpu"},
		Nodes: []Node{
			{ID: "cpu-1", Capacity: ledger.Vector{4, 8 * gib, 0, 0}, Free: ledger.Vector{4, 8 * gib, 0, 0}},
			{ID: "mic-1", Capacity: ledger.Vector{4, 8 * gib, 2, 0}, Free: ledger.Vector{4, 8 * gib, 2, 0}},
		},
		Settings: Settings{Policy: HMRF, Quantum: time.Minute, Placement: place.Affinity},
		Accounts: []Account{
			{Name: "bio", Weight: 1, Running: ledger.NewVector(4), Usage: ledger.NewVector(4), Baseline: ledger.NewVector(4), BaselineRate: ledger.NewVector(4),
				Queue: []Job{{ID: 1, Demand: ledger.Vector{5, 0, 0, 0}, Pending: 3}, {ID: 2, Demand: ledger.Vector{1, 0, 0, 0}, Pending: 2}, {ID: 3, Demand: ledger.Vector{4, 0, 0, 0}, Pending: 1}}},
			{Name: "chem", Weight: 1, Running: ledger.NewVector(4), Usage: ledger.NewVector(4), Baseline: ledger.NewVector(4), BaselineRate: ledger.NewVector(4),
				Queue: []Job{{ID: 4, Demand: ledger.Vector{1, 0, 1, 0}, Pending: 1}}},
		},
	}
}

// A job no node can hold is told what is too large and the largest node
// shapes; a job that fits an idle node but not what is free waits for
// resources, on the closest node; a job with room names the nodes. Tasks
// ahead in the account's queue count only when some node holds them.
func TestExplainSaysWhatTheJobWaitsFor(t *testing.T) {
	e := NewEngine()
	v := explainView()
	x, err := e.Explain(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	if x.Wait != WaitNoNodeHolds || x.Lacking != "cpu=5" || x.Largest != "cpu=4 mem=8G mic=2" || x.Shapes != 1 {
		t.Errorf("a 5-cpu job on 4-cpu nodes: %+v", x)
	}
	v.Accounts[0].Queue[0].Demand = ledger.Vector{1, 0, 0, 1}
	if x, err = e.Explain(v, 1); err != nil || x.Wait != WaitNoNodeHolds || !strings.Contains(x.Lacking, "gpu=1 (none has any gpu)") {
		t.Errorf("a gpu job on nodes without gpus: %+v, %v", x, err)
	}
	x, err = e.Explain(v, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Job 1 holds nothing back: only job 2's two tasks are ahead.
	if x.Wait != WaitRoom || strings.Join(x.Room, ",") != "cpu-1,mic-1" || x.Ahead != 2 || x.Holding != 2 {
		t.Errorf("a 4-cpu job on idle 4-cpu nodes: %+v", x)
	}
	v.Nodes[0].Free[0], v.Nodes[1].Free[0] = 0, 1
	if x, err = e.Explain(v, 3); err != nil || x.Wait != WaitNoRoom || x.Closest != "mic-1" || x.ClosestFree[0] != 1 {
		t.Errorf("a 4-cpu job on busy nodes: %+v, %v", x, err)
	}
	if _, err := e.Explain(v, 99); err == nil {
		t.Error("Explain of a job with no pending task gave no error")
	}
	v.Nodes = nil
	// With no node every account with work is ranked.
	if x, err = e.Explain(v, 4); err != nil || x.Wait != WaitNoNodes || x.Ranked != 2 || x.Rank == 0 {
		t.Errorf("no nodes: %+v, %v", x, err)
	}
}

// An account whose only job no node can hold is not ranked: the pass
// passes it over. Under a policy the rank key cannot order, Explain says
// it ranks by β.
func TestExplainRanksOnlyAccountsThePassServes(t *testing.T) {
	e := NewEngine()
	v := explainView()
	v.Accounts[1].Queue[0].Demand = ledger.Vector{8, 0, 0, 0}
	x, err := e.Explain(v, 4)
	if err != nil {
		t.Fatal(err)
	}
	if x.Rank != 0 || x.Ranked != 1 || x.First != "bio" {
		t.Errorf("an account no node can serve: %+v", x)
	}
	v.Settings.Policy = DFF
	if x, err = e.Explain(v, 2); err != nil || x.KeyExact || x.Rank != 1 || !strings.Contains(x.Rule, "by β") {
		t.Errorf("dff: %+v, %v", x, err)
	}
}
