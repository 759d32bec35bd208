package sched

import (
	"math"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// dffFigure1 is the DFF paper's hierarchy (Fig. 1) on its CPU–MIC cluster
// (§4.1: 336 CPU threads, 7 × 136 GB, 21 MICs) with one Table 1 job per
// leaf, each leaf weighted equally.
func dffFigure1() *View {
	capacity := ledger.Vector{336, 7 * 136, 21}
	v := &View{
		Resources: []string{"cpu", "mem", "mic"},
		Nodes:     []Node{{ID: "cluster", Capacity: capacity, Free: capacity.Clone()}},
		Groups:    []Group{{Path: "n1", Weight: 1}, {Path: "n2", Weight: 1}, {Path: "n3", Weight: 1}, {Path: "n4", Weight: 1}},
		Settings:  Settings{Policy: DFF, Quantum: time.Minute, Placement: Affinity},
	}
	jobs := []struct {
		name, group string
		demand      ledger.Vector
		tasks       int
	}{
		{"job1", "n1", ledger.Vector{4, 4, 0}, 300},
		{"job2", "n2", ledger.Vector{4, 3, 0}, 370},
		{"job3", "n3", ledger.Vector{2, 4, 0}, 260},
		{"job4", "n3", ledger.Vector{1, 4, 2}, 180},
		{"job5", "n4", ledger.Vector{1, 3, 2}, 280},
	}
	for i, j := range jobs {
		v.Accounts = append(v.Accounts, Account{
			Name: j.name, Weight: 1, Group: j.group,
			Running: ledger.NewVector(3), Usage: ledger.NewVector(3), Baseline: ledger.NewVector(3), BaselineRate: ledger.NewVector(3),
			Queue: []Job{{ID: uint64(i + 1), Demand: j.demand, Pending: j.tasks}},
		})
	}
	return v
}

func TestAccountTreeFairResourcesFollowFormula3(t *testing.T) {
	v := dffFigure1()
	v.Accounts[0].Running = ledger.Vector{42, 42, 0}
	nodes, err := AccountTree(v)
	if err != nil {
		t.Fatal(err)
	}
	// By hand from Formula 3: CPU and memory are needed by all four
	// groups, MICs only by n3 (for n3,2) and n4; inside n3, CPU and memory
	// are split between n3,1 and n3,2 and the MICs go to n3,2 alone.
	want := map[string]ledger.Vector{
		"":        {336, 952, 21},
		"n1":      {84, 238, 0},
		"n1/job1": {84, 238, 0},
		"n2/job2": {84, 238, 0},
		"n3":      {84, 238, 10.5},
		"n3/job3": {42, 119, 0},
		"n3/job4": {42, 119, 10.5},
		"n4":      {84, 238, 10.5},
		"n4/job5": {84, 238, 10.5},
	}
	seen := 0
	order := []string{}
	for _, n := range nodes {
		order = append(order, n.Path)
		fr, ok := want[n.Path]
		if !ok {
			continue
		}
		seen++
		for j := range fr {
			if math.Abs(n.FairResource[j]-fr[j]) > 1e-9 {
				t.Errorf("%q: Fair Resource %v, want %v", n.Path, n.FairResource, fr)
				break
			}
		}
	}
	if seen != len(want) || len(nodes) != 10 {
		t.Fatalf("tree has nodes %v, want the root, four groups and five jobs", order)
	}
	// job1 holds 42 of its 84 CPUs and 42 of its 238 GB: fairness 0.5, and
	// so does n1; the root holds 42/336 of the CPUs.
	for _, n := range nodes {
		switch n.Path {
		case "n1/job1", "n1":
			if math.Abs(n.Fairness-0.5) > 1e-12 {
				t.Errorf("%q: fairness %v, want 0.5", n.Path, n.Fairness)
			}
		case "":
			if n.Depth != 0 || math.Abs(n.Fairness-0.125) > 1e-12 {
				t.Errorf("root: depth %d fairness %v, want 0 and 0.125", n.Depth, n.Fairness)
			}
		case "n3/job4":
			if n.Name != "job4" || n.Depth != 2 || n.Account != 3 || n.Share != 0.5 {
				t.Errorf("n3/job4: %+v", n)
			}
		}
	}
}
