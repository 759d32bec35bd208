package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/longfair/longfair/ledger"
)

// SyntheticOptions size a synthetic workload.
type SyntheticOptions struct {
	// Tasks is the total number of tasks; the last job is trimmed to hit it.
	Tasks int
	// Accounts is the number of accounts; 0 means 16.
	Accounts int
	// Nodes is the number of <32 cores, 128 GB> nodes; 0 means 256.
	Nodes int
	// Load is the offered load as a fraction of the cluster's cores over
	// the submission span; 0 means 0.95.
	Load float64
	// Seed makes every random choice.
	Seed uint64
}

// Synthetic node shape and job mix.
const (
	syntheticCores    = 32.0
	syntheticMemGB    = 128.0
	syntheticMaxArray = 256 // tasks per job, drawn log-uniformly from 1..this
	syntheticMinRun   = 30 * time.Second
	syntheticMaxRun   = time.Hour
)

// syntheticShapes are task demands <cores, GB>: serial, memory-heavy,
// CPU-heavy and fat tasks.
var syntheticShapes = []ledger.Vector{{1, 2}, {1, 8}, {2, 4}, {4, 8}, {4, 32}, {8, 16}, {2, 16}, {16, 64}}

// Synthetic generates a large random workload for replay benchmarks: jobs of
// 1–256 identical tasks (log-uniform), demands from a fixed set of shapes,
// task runtimes log-uniform between 30 s and 1 h, Poisson arrivals scaled to
// the offered load. Accounts contribute 1–4 units each and submit unevenly
// (each has an activity factor between ¼ and 4 times its contribution), so
// some borrow and some lend. Deterministic for a given seed.
func Synthetic(opt SyntheticOptions) (*Workload, error) {
	if opt.Tasks <= 0 {
		return nil, fmt.Errorf("synthetic workload: %d tasks: give a positive number of tasks", opt.Tasks)
	}
	if opt.Accounts < 0 || opt.Nodes < 0 || opt.Load < 0 || math.IsNaN(opt.Load) {
		return nil, fmt.Errorf("synthetic workload: accounts %d, nodes %d and load %v must not be negative", opt.Accounts, opt.Nodes, opt.Load)
	}
	accounts, nodes, load := opt.Accounts, opt.Nodes, opt.Load
	if accounts == 0 {
		accounts = 16
	}
	if nodes == 0 {
		nodes = 256
	}
	if load == 0 {
		load = 0.95
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x73796e7468)) // "synth"
	w := &Workload{
		Name:      fmt.Sprintf("synthetic: %d tasks, %d accounts, %d nodes, seed %d", opt.Tasks, accounts, nodes, opt.Seed),
		Resources: []string{"cpu", "mem"},
		Units:     []string{"cores", "GB"},
		Nodes:     make([]Node, nodes),
		Accounts:  make([]Account, accounts),
	}
	for i := range w.Nodes {
		w.Nodes[i] = Node{ID: fmt.Sprintf("n%05d", i+1), Capacity: ledger.Vector{syntheticCores, syntheticMemGB}}
	}
	// Cumulative activity, for picking each job's account.
	cum := make([]float64, accounts)
	total := 0.0
	for i := range w.Accounts {
		weight := float64(1 + rng.IntN(4))
		w.Accounts[i] = Account{Name: fmt.Sprintf("acct%03d", i+1), Weight: weight}
		total += weight * math.Exp2(rng.Float64()*4-2)
		cum[i] = total
	}
	logUniform := func(lo, hi float64) float64 { return lo * math.Pow(hi/lo, rng.Float64()) }
	work, clock := 0.0, 0.0 // core-seconds offered; arrival clock in mean gaps
	var arrivals []float64
	for left := opt.Tasks; left > 0; {
		n := min(left, int(logUniform(1, syntheticMaxArray+1)))
		left -= n
		x := rng.Float64() * total
		a := 0
		for cum[a] < x {
			a++
		}
		shape := syntheticShapes[rng.IntN(len(syntheticShapes))]
		run := time.Duration(logUniform(float64(syntheticMinRun), float64(syntheticMaxRun))).Round(time.Second)
		clock += rng.ExpFloat64()
		arrivals = append(arrivals, clock)
		w.Jobs = append(w.Jobs, Job{
			ID: uint64(len(w.Jobs) + 1), Account: a,
			Demand: shape.Clone(), Tasks: n, Runtime: run,
		})
		work += float64(n) * shape[0] * run.Seconds()
	}
	// Stretch the arrival clock so the offered work fills the cluster's
	// cores to the requested load over the submission span.
	span := work / (load * syntheticCores * float64(nodes))
	scale := span / clock * float64(time.Second)
	for i := range w.Jobs {
		// Whole seconds, the resolution of real traces.
		w.Jobs[i].Submit = ledger.Time(math.Round(arrivals[i]*scale/float64(time.Second))) * ledger.Time(time.Second)
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("synthetic workload: %w", err)
	}
	return w, nil
}
