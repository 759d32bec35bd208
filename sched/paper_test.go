package sched

import (
	"math"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// slotAccount is one user of the paper's slotted examples: every task of the
// account demands task, lasts one slot, and arrives at a slot's start.
type slotAccount struct {
	name   string
	weight float64
	task   ledger.Vector
}

// slotResult is what happened in one slot.
type slotResult struct {
	running   []int     // tasks started per account
	aggregate []float64 // Σ_j Ü_ij at the end of the slot
	beta      []float64 // β_i at the end of the slot
}

// runSlots replays the paper's slotted model through the engine: the cluster
// is one machine of the given capacity, a slot is the quantum, and the
// fairness state is integrated here independently of the ledger package.
func runSlots(t *testing.T, policy Policy, capacity ledger.Vector, accts []slotAccount, arrivals [][]int) []slotResult {
	t.Helper()
	n := len(capacity)
	total := 0.0
	for _, a := range accts {
		total += a.weight
	}
	pending := make([]int, len(accts))
	usage := make([]ledger.Vector, len(accts))
	baseline := make([]ledger.Vector, len(accts))
	for i := range accts {
		usage[i], baseline[i] = ledger.NewVector(n), ledger.NewVector(n)
	}
	eng := NewEngine()
	var results []slotResult
	for slot, arr := range arrivals {
		view := &View{
			Now:       ledger.Time(slot) * ledger.Time(time.Second),
			Resources: []string{"cpu", "mem"}[:n],
			Nodes:     []Node{{ID: "machine", Capacity: capacity, Free: capacity.Clone()}},
			Settings:  Settings{Policy: policy, Quantum: time.Second, Placement: Affinity},
		}
		rates := make([]ledger.Vector, len(accts))
		for i, a := range accts {
			pending[i] += arr[i]
			rates[i] = ledger.NonSharingRate(ledger.Share(capacity, a.weight, total), []ledger.TaskGroup{{Demand: a.task, Count: pending[i]}})
			view.Accounts = append(view.Accounts, Account{
				Name: a.name, Weight: a.weight,
				Running: ledger.NewVector(n), Usage: usage[i].Clone(), Baseline: baseline[i].Clone(), BaselineRate: rates[i],
				Queue: []Job{{ID: uint64(i + 1), Demand: a.task, Pending: pending[i]}},
			})
		}
		placements, err := eng.Schedule(view)
		if err != nil {
			t.Fatalf("slot %d: %v", slot, err)
		}
		res := slotResult{running: make([]int, len(accts)), aggregate: make([]float64, len(accts)), beta: make([]float64, len(accts))}
		for _, p := range placements {
			res.running[p.Account]++
		}
		for i, a := range accts {
			pending[i] -= res.running[i]
			usage[i].AddScaled(a.task, float64(res.running[i]))
			baseline[i].Add(rates[i])
			res.aggregate[i] = usage[i].Sum()
			res.beta[i] = ledger.Beta(usage[i], baseline[i])
		}
		results = append(results, res)
	}
	return results
}

func running(results []slotResult) [][]int {
	out := make([][]int, len(results))
	for i, r := range results {
		out[i] = r.running
	}
	return out
}

func equalRuns(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// Example 3 / Table 1: 100 CPUs and 100 GB, A runs <1 CPU, 4 GB> tasks, B
// runs <4 CPUs, 1 GB> tasks, new tasks per slot A: 30 20 27 10, B: 4 24 8 30.
var table1Accounts = []slotAccount{
	{name: "A", weight: 1, task: ledger.Vector{1, 4}},
	{name: "B", weight: 1, task: ledger.Vector{4, 1}},
}
var table1Arrivals = [][]int{{30, 4}, {20, 24}, {27, 8}, {10, 30}}

func TestTable1aMemorylessPolicies(t *testing.T) {
	// Table 1(a): running tasks per slot under memoryless fairness (the
	// paper says DRF and AF alike); totals 86 for A and 56 for B.
	want := [][]int{{24, 4}, {20, 20}, {22, 12}, {20, 20}}
	for _, p := range []Policy{DRF, AF} {
		got := running(runSlots(t, p, ledger.Vector{100, 100}, table1Accounts, table1Arrivals))
		if !equalRuns(got, want) {
			t.Errorf("%s: running per slot = %v, paper's Table 1(a) says %v", p, got, want)
		}
		if a, b := totals(got); a != 86 || b != 56 {
			t.Errorf("%s: totals A=%d B=%d, paper says 86 and 56", p, a, b)
		}
	}
}

func TestTable1bHMRF(t *testing.T) {
	// Table 1(b): H-MRF catches B up; both end with 59 tasks.
	want := [][]int{{24, 4}, {4, 24}, {23, 8}, {8, 23}}
	got := running(runSlots(t, HMRF, ledger.Vector{100, 100}, table1Accounts, table1Arrivals))
	if !equalRuns(got, want) {
		t.Errorf("hmrf: running per slot = %v, paper's Table 1(b) says %v", got, want)
	}
	if a, b := totals(got); a != 59 || b != 59 {
		t.Errorf("hmrf: totals A=%d B=%d, paper says 59 and 59", a, b)
	}
}

func totals(runs [][]int) (a, b int) {
	for _, r := range runs {
		a += r[0]
		b += r[1]
	}
	return a, b
}

// Example 4: 100 CPUs and 100 GB, A runs <1 CPU, 2 GB>, B runs <1 CPU, 1 GB>.
// At t1 A has 15 tasks and B 80; at t2 A has 60 and B 40 waiting (B's 10 left
// from t1 and 30 new).
var example4Accounts = []slotAccount{
	{name: "A", weight: 1, task: ledger.Vector{1, 2}},
	{name: "B", weight: 1, task: ledger.Vector{1, 1}},
}
var example4Arrivals = [][]int{{15, 80}, {60, 30}}

func TestExample4LTDRF(t *testing.T) {
	res := runSlots(t, LTDRF, ledger.Vector{100, 100}, example4Accounts, example4Arrivals)
	if got, want := res[1].running, []int{35, 30}; !equalRuns([][]int{got}, [][]int{want}) {
		t.Errorf("ltdrf at t2: A,B run %v, paper says %v", got, want)
	}
}

func TestExample4LTAF(t *testing.T) {
	res := runSlots(t, LTAF, ledger.Vector{100, 100}, example4Accounts, example4Arrivals)
	checkSlot(t, "ltaf t1", res[0], []int{15, 70}, []float64{45, 140}, nil)
	checkSlot(t, "ltaf t2", res[1], []int{42, 16}, []float64{171, 172}, nil)
}

func TestExample4HMRF(t *testing.T) {
	res := runSlots(t, HMRF, ledger.Vector{100, 100}, example4Accounts, example4Arrivals)
	checkSlot(t, "hmrf t1", res[0], []int{15, 70}, []float64{45, 140}, []float64{1, 1.4})
	checkSlot(t, "hmrf t2", res[1], []int{40, 20}, []float64{165, 180}, []float64{1.375, 1})
}

func checkSlot(t *testing.T, name string, r slotResult, run []int, agg, beta []float64) {
	t.Helper()
	for i := range run {
		if r.running[i] != run[i] {
			t.Errorf("%s: running %v, paper says %v", name, r.running, run)
			break
		}
	}
	for i := range agg {
		if math.Abs(r.aggregate[i]-agg[i]) > 1e-9 {
			t.Errorf("%s: aggregate accumulated resources %v, paper says %v", name, r.aggregate, agg)
			break
		}
	}
	for i := range beta {
		if math.Abs(r.beta[i]-beta[i]) > 1e-9 {
			t.Errorf("%s: sharing degrees %v, paper says %v", name, r.beta, beta)
			break
		}
	}
}

// Example 1: DRF on 100 CPUs, 100 GB with unbounded demand gives A <25, 50>
// and B <50, 50>.
func TestExample1DRF(t *testing.T) {
	capacity := ledger.Vector{100, 100}
	accts := []slotAccount{{"A", 1, ledger.Vector{1, 2}}, {"B", 1, ledger.Vector{1, 1}}}
	res := runSlots(t, DRF, capacity, accts, [][]int{{1000, 1000}})
	for i, want := range []ledger.Vector{{25, 50}, {50, 50}} {
		got := accts[i].task.Clone()
		got.Scale(float64(res[0].running[i]))
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("DRF gives %s %v, paper says %v", accts[i].name, got, want)
		}
	}
}

// Example 2: 120 CPUs, 120 GB shared equally by A <1,2>×50, B <2,1>×10 and
// C <1,4>×10. Under DRF, C gains <4 CPUs, 16 GB> by submitting 4 extra tasks.
func TestExample2DRFUntruthful(t *testing.T) {
	capacity := ledger.Vector{120, 120}
	accts := []slotAccount{{"A", 1, ledger.Vector{1, 2}}, {"B", 1, ledger.Vector{2, 1}}, {"C", 1, ledger.Vector{1, 4}}}
	alloc := func(cTasks int) ledger.Vector {
		res := runSlots(t, DRF, capacity, accts, [][]int{{50, 10, cTasks}})
		v := accts[2].task.Clone()
		v.Scale(float64(res[0].running[2]))
		return v
	}
	honest, lying := alloc(10), alloc(14)
	gain := lying.Clone()
	gain.Sub(honest)
	if gain[0] != 4 || gain[1] != 16 {
		t.Errorf("C gains %v by lying under DRF (honest %v, lying %v); paper says <4, 16>", gain, honest, lying)
	}
}
