package reproduce

import (
	"fmt"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

// The DFF paper's experiment (§4): a CPU–MIC cluster of seven nodes, each
// with two 24-thread Xeon E5-2670 (48 CPU threads), 136 GB and three Xeon
// Phi 3120P (336 threads, 952 GB and 21 MICs in all), running the five jobs
// of Table 1 under the hierarchy of Fig. 1: four groups n1–n4 of equal
// weight; n3 holds two jobs, the others one.
const (
	DFFNodes       = 7
	DFFNodeThreads = 48
	DFFNodeMemGB   = 136
	DFFNodeMICs    = 3
)

// dffJob is one row of Table 1.
type dffJob struct {
	name, group string
	demand      ledger.Vector // <CPU threads, GB, MICs>
	tasks       int
	runtime     time.Duration
}

// dffTable1 is Table 1 of the paper. The task runtimes are not in the
// paper; they are ours, chosen so that the CPU jobs keep the CPUs busy for
// about the first 2,000 s as in Fig. 2: 200 s per CPU task, 30 s per MIC
// offload task.
var dffTable1 = []dffJob{
	{"job1", "n1", ledger.Vector{4, 4, 0}, 300, 200 * time.Second},
	{"job2", "n2", ledger.Vector{4, 3, 0}, 370, 200 * time.Second},
	{"job3", "n3", ledger.Vector{2, 4, 0}, 260, 200 * time.Second},
	{"job4", "n3", ledger.Vector{1, 4, 2}, 180, 30 * time.Second},
	{"job5", "n4", ledger.Vector{1, 3, 2}, 280, 30 * time.Second},
}

// DFFOptions choose the variant of the DFF cluster.
type DFFOptions struct {
	// PooledMICs models the cluster's 336 threads, 952 GB and 21 MICs as
	// one pool, so that a task's MICs need not share a node with its CPU
	// thread. The paper does not say how its YARN counted MICs; on seven
	// real nodes of three MICs each, a task of two MICs fits once per node,
	// which caps every policy at seven MIC tasks at a time.
	PooledMICs bool
}

// DFFCluster returns the DFF paper's workload with its account tree: every
// job of Table 1 is an account of its own (a leaf of Fig. 1, n1,1 … n4,1)
// in its group, all submitted at time zero.
func DFFCluster(opt DFFOptions) (*sim.Workload, error) {
	w := &sim.Workload{
		Name:      "DFF CPU–MIC cluster (Table 1 jobs, Fig. 1 hierarchy)",
		Resources: []string{"cpu", "mem", "mic"},
		Units:     []string{"threads", "GB", "MICs"},
		Notes: []string{
			"7 nodes of <48 CPU threads, 136 GB, 3 MICs>; groups n1..n4 of weight 1; one account per Table 1 job",
			"task runtimes are not in the paper: 200 s per CPU task (jobs 1–3), 30 s per MIC task (jobs 4, 5)",
		},
	}
	for i := range DFFNodes {
		w.Nodes = append(w.Nodes, sim.Node{ID: fmt.Sprintf("cn%d", i+1), Capacity: ledger.Vector{DFFNodeThreads, DFFNodeMemGB, DFFNodeMICs}})
	}
	if opt.PooledMICs {
		w.Name += ", MICs pooled"
		w.Nodes = []sim.Node{{ID: "pool", Capacity: w.Capacity()}}
	}
	for _, g := range []string{"n1", "n2", "n3", "n4"} {
		w.Groups = append(w.Groups, sched.Group{Path: g, Weight: 1})
	}
	for i, j := range dffTable1 {
		w.Accounts = append(w.Accounts, sim.Account{Name: j.name, Weight: 1, Group: j.group})
		w.Jobs = append(w.Jobs, sim.Job{ID: uint64(i + 1), Name: j.name, Account: i, Demand: j.demand.Clone(), Tasks: j.tasks, Runtime: j.runtime})
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("dff workload: %w", err)
	}
	return w, nil
}
