package sched

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

func TestQKnoblerAtRhoOneIsDRF(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 1))
	for iter := range 300 {
		placement := []PlacementStrategy{Affinity, BestFit, Spread}[iter%3]
		v := randomView(r, DRF, placement)
		want, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]Placement(nil), want...)
		v.Settings.Policy, v.Settings.QKnoblerRho = QKnobler, 1
		got, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, append([]Placement(nil), got...)) {
			t.Fatalf("iteration %d (%s): qknobler with ρ = 1 placed %d tasks differently from drf's %d", iter, placement, len(got), len(want))
		}
	}
}

// twoUsers is Example 1 of the QKnobler paper (§4): 200 CPUs and 1000 GB
// shared equally by A with tasks of <1 CPU, 6 GB> and B with <1 CPU, 2 GB>,
// both with far more tasks than fit, on one machine (the paper's model).
func twoUsers(rho float64, extra ...ledger.Vector) *View {
	v := &View{
		Resources: []string{"cpu", "mem"},
		Nodes:     []Node{{ID: "machine", Capacity: ledger.Vector{200, 1000}, Free: ledger.Vector{200, 1000}}},
		Settings:  Settings{Policy: QKnobler, QKnoblerRho: rho, Quantum: time.Minute, Placement: Affinity},
	}
	demands := append([]ledger.Vector{{1, 6}, {1, 2}}, extra...)
	for i, d := range demands {
		v.Accounts = append(v.Accounts, Account{
			Name: string(rune('A' + i)), Weight: 1,
			Running: ledger.NewVector(2), Usage: ledger.NewVector(2), Baseline: ledger.NewVector(2), BaselineRate: ledger.NewVector(2),
			Queue: []Job{{ID: uint64(i + 1), Demand: d, Pending: 1000}},
		})
	}
	return v
}

// allocation returns what each account holds after the pass.
func allocation(v *View, ps []Placement) []ledger.Vector {
	held := make([]ledger.Vector, len(v.Accounts))
	for i := range v.Accounts {
		held[i] = v.Accounts[i].Running.Clone()
	}
	for _, p := range ps {
		held[p.Account].Add(v.Accounts[p.Account].Queue[p.Job].Demand)
	}
	return held
}

// efficiency is Formula (7): Σ_i N_i·Σ_k d_ik/r_k, i.e. Σ_k of the share of
// resource k in use.
func efficiency(capacity ledger.Vector, held []ledger.Vector) float64 {
	e := 0.0
	for _, h := range held {
		for k := range h {
			e += h[k] / capacity[k]
		}
	}
	return e
}

func theta(t *testing.T, capacity ledger.Vector, v *View, held []ledger.Vector) float64 {
	t.Helper()
	shares := make([]AccountShare, len(held))
	for i := range held {
		shares[i] = AccountShare{Weight: v.Accounts[i].Weight, Held: held[i], Waiting: true}
	}
	th, err := SoftFairness(capacity, shares)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestQKnoblerPaperExample1(t *testing.T) {
	capacity := ledger.Vector{200, 1000}
	run := func(rho float64, extra ...ledger.Vector) (*View, []ledger.Vector) {
		v := twoUsers(rho, extra...)
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		return v, allocation(v, ps)
	}
	// ρ = 1 is DRF: Figure 1, "546/1000 = 109/200", memory 76% used.
	v1, drf := run(1)
	if a, b := drf[0][1]/1000, drf[1][0]/200; math.Abs(a-0.546) > 0.006 || math.Abs(b-0.545) > 0.006 {
		t.Errorf("ρ = 1: dominant shares A %.3f (mem), B %.3f (cpu), the paper has 546/1000 and 109/200", a, b)
	}
	if mem := (drf[0][1] + drf[1][1]) / 1000; math.Abs(mem-0.76) > 0.01 {
		t.Errorf("ρ = 1: memory utilization %.3f, the paper has 76%%", mem)
	}
	// Figure 3: a third user C with B's tasks: <58, 348>, <71, 142>, <71, 142>, memory 63%.
	_, three := run(1, ledger.Vector{1, 2})
	for i, want := range []ledger.Vector{{58, 348}, {71, 142}, {71, 142}} {
		if math.Abs(three[i][0]-want[0]) > 1 || math.Abs(three[i][1]-want[1]) > 6 {
			t.Errorf("ρ = 1, three users: %c holds %v, the paper has %v", 'A'+i, three[i], want)
		}
	}
	if mem := (three[0][1] + three[1][1] + three[2][1]) / 1000; math.Abs(mem-0.63) > 0.01 {
		t.Errorf("ρ = 1, three users: memory utilization %.3f, the paper has 63%%", mem)
	}

	// Lower knobs trade fairness for efficiency, within Theorem 1's θ.
	weights := []float64{1, 1}
	demands := []ledger.Vector{{1, 6}, {1, 2}}
	effDRF := efficiency(capacity, drf)
	for _, rho := range []float64{0, 0.25, 0.5, 0.75} {
		v, held := run(rho)
		eff := efficiency(capacity, held)
		if eff <= effDRF {
			t.Errorf("ρ = %v: efficiency %.3f, not above drf's %.3f", rho, eff, effDRF)
		}
		bound, err := QKnoblerThetaBound(capacity, weights, demands, rho)
		if err != nil {
			t.Fatal(err)
		}
		// One task of A is the most a single indivisible task moves a share.
		if th := theta(t, capacity, v, held); th > bound+0.006 {
			t.Errorf("ρ = %v: θ %.4f exceeds Theorem 1's %.4f", rho, th, bound)
		}
		// The fairness stage gives each account at least ρ of its DRF share.
		for i := range held {
			if got, floor := dominantShare(held[i], capacity, 1), rho*dominantShare(drf[i], capacity, 1); got < floor-0.006 {
				t.Errorf("ρ = %v: %c holds dominant share %.3f, below ρ·s_max = %.3f", rho, 'A'+i, got, floor)
			}
		}
	}
	if th := theta(t, capacity, v1, drf); th > 0.006 {
		t.Errorf("ρ = 1: θ %.4f, DRF should equalize the dominant shares to within a task", th)
	}
}

func TestQKnoblerEstimatesDRFShareOfThePaper(t *testing.T) {
	// Formula (11) for Example 1 gives s_max = 546/1000 for both users; the
	// fairness limit is ρ·s_max/w with the weights normalized to ½ each.
	const rho, w = 0.5, 0.5
	e := NewEngine()
	v := twoUsers(rho)
	if _, err := e.Schedule(v); err != nil {
		t.Fatal(err)
	}
	for a, limit := range e.knob.limit {
		if sMax := limit / rho * w; math.Abs(sMax-0.546) > 0.001 {
			t.Errorf("account %d: estimated s_max %.4f, the paper has 546/1000", a, sMax)
		}
	}
}

// levelsByBisection is an independent reference for waterFill: the largest
// common level λ at which Σ_i min(1, λ·w_i/δ_i)·T_i fits the capacity,
// found by bisection.
func levelsByBisection(capacity ledger.Vector, demand []ledger.Vector, w []float64) []float64 {
	dom := make([]float64, len(demand))
	for i := range demand {
		dom[i] = dominantShare(demand[i], capacity, 1)
	}
	fits := func(level float64) bool {
		load := ledger.NewVector(len(capacity))
		for i := range demand {
			if dom[i] > 0 {
				load.AddScaled(demand[i], math.Min(1, level*w[i]/dom[i]))
			}
		}
		for k := range capacity {
			if capacity[k] > 0 && load[k] > capacity[k]*(1+1e-12) {
				return false
			}
		}
		return true
	}
	lo, hi := 0.0, 1.0
	for fits(hi) && hi < 1e12 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(demand))
	for i := range demand {
		if dom[i] > 0 {
			out[i] = math.Min(dom[i]/w[i], lo)
		}
	}
	return out
}

func TestWaterFillMatchesBisection(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 2))
	var f waterFill
	for iter := range 500 {
		k := 1 + r.IntN(3)
		capacity := ledger.NewVector(k)
		for j := range capacity {
			capacity[j] = float64(10 + r.IntN(1000))
		}
		n := 1 + r.IntN(8)
		demand := make([]ledger.Vector, n)
		w := make([]float64, n)
		for i := range demand {
			demand[i] = ledger.NewVector(k)
			for j := range demand[i] {
				if r.IntN(4) > 0 {
					demand[i][j] = r.Float64() * capacity[j] * 0.8
				}
			}
			w[i] = 0.1 + r.Float64()
		}
		got := f.levels(capacity, demand, w)
		want := levelsByBisection(capacity, demand, w)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, want[i]) {
				t.Fatalf("iteration %d account %d: level %.9f, bisection says %.9f (demands %v, weights %v, capacity %v)", iter, i, got[i], want[i], demand, w, capacity)
			}
		}
	}
}

func TestQKnoblerThetaWithinTheorem1(t *testing.T) {
	// The paper's model: backlogged accounts, one machine. Theorem 1 bounds
	// θ up to the share one indivisible task moves.
	r := rand.New(rand.NewPCG(63, 3))
	for iter := range 200 {
		capacity := ledger.Vector{float64(200 + r.IntN(800)), float64(500 + r.IntN(4000))}
		v := &View{
			Resources: []string{"cpu", "mem"},
			Nodes:     []Node{{ID: "machine", Capacity: capacity, Free: capacity.Clone()}},
			Settings:  Settings{Policy: QKnobler, Quantum: time.Minute, Placement: Affinity, QKnoblerRho: []float64{0, 0.25, 0.5, 0.75, 0.9}[iter%5]},
		}
		n := 2 + r.IntN(4)
		weights := make([]float64, n)
		demands := make([]ledger.Vector, n)
		for i := range n {
			weights[i] = float64(1 + r.IntN(4))
			demands[i] = ledger.Vector{float64(1 + r.IntN(4)), float64(1 + r.IntN(16))}
			v.Accounts = append(v.Accounts, Account{
				Name: string(rune('A' + i)), Weight: weights[i],
				Running: ledger.NewVector(2), Usage: ledger.NewVector(2), Baseline: ledger.NewVector(2), BaselineRate: ledger.NewVector(2),
				Queue: []Job{{ID: uint64(i), Demand: demands[i], Pending: 100000}},
			})
		}
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		held := allocation(v, ps)
		bound, err := QKnoblerThetaBound(capacity, weights, demands, v.Settings.QKnoblerRho)
		if err != nil {
			t.Fatal(err)
		}
		mean := 0.0
		for _, w := range weights {
			mean += w / float64(n)
		}
		slack := 0.0
		for i := range demands {
			slack = math.Max(slack, dominantShare(demands[i], capacity, weights[i]/mean))
		}
		if th := theta(t, capacity, v, held); th > bound+2*slack {
			t.Fatalf("iteration %d (ρ = %v): θ %.4f exceeds Theorem 1's %.4f by more than two tasks (%.4f); demands %v weights %v capacity %v",
				iter, v.Settings.QKnoblerRho, th, bound, slack, demands, weights, capacity)
		}
	}
}

func TestQKnoblerLowerKnobUsesTheClusterBetter(t *testing.T) {
	// Random multi-node backlogged clusters: every pass is work conserving,
	// but the efficiency stage packs more resource than drf on average.
	r := rand.New(rand.NewPCG(64, 4))
	var sum [2]float64
	for range 100 {
		v := randomBackloggedView(r)
		for i, rho := range []float64{1, 0} {
			v.Settings.QKnoblerRho = rho
			ps, err := NewEngine().Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			capacity := ledger.NewVector(2)
			for _, n := range v.Nodes {
				capacity.Add(n.Capacity)
			}
			sum[i] += efficiency(capacity, allocation(v, ps))
		}
	}
	if sum[1] <= sum[0] {
		t.Errorf("mean efficiency at ρ = 0 is %.3f, not above ρ = 1's %.3f", sum[1]/100, sum[0]/100)
	}
}

func randomBackloggedView(r *rand.Rand) *View {
	v := &View{
		Resources: []string{"cpu", "mem"},
		Settings:  Settings{Policy: QKnobler, Quantum: time.Minute, Placement: Affinity},
	}
	for i := range 4 + r.IntN(12) {
		c := ledger.Vector{32, 128}
		v.Nodes = append(v.Nodes, Node{ID: string(rune('a' + i)), Capacity: c, Free: c.Clone()})
	}
	for i := range 2 + r.IntN(5) {
		v.Accounts = append(v.Accounts, Account{
			Name: string(rune('A' + i)), Weight: 1,
			Running: ledger.NewVector(2), Usage: ledger.NewVector(2), Baseline: ledger.NewVector(2), BaselineRate: ledger.NewVector(2),
			Queue: []Job{{ID: uint64(i), Demand: ledger.Vector{float64(1 + r.IntN(8)), float64(1 + r.IntN(32))}, Pending: 10000}},
		})
	}
	return v
}

func TestQKnoblerAndBPFPassesAreWorkConserving(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 5))
	eng := NewEngine()
	for iter := range 600 {
		policy := []Policy{QKnobler, BPF, SP}[iter%3]
		v := randomView(r, policy, []PlacementStrategy{Affinity, BestFit, Spread}[(iter/3)%3])
		v.Settings.QKnoblerRho = []float64{0, 0.3, 0.7, 0.99, 1}[r.IntN(5)]
		addLatencyQueues(r, v)
		ps, err := eng.Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		checkWorkConserving(t, iter, v, ps, nil)
	}
}

// addLatencyQueues makes some of the view's accounts latency queues with
// random specs, classes and usage this burst.
func addLatencyQueues(r *rand.Rand, v *View) {
	for i := range v.Accounts {
		if r.IntN(3) > 0 {
			continue
		}
		period := time.Duration(1+r.IntN(600)) * time.Second
		v.Accounts[i].Latency = &LatencyQueue{
			LatencySpec: LatencySpec{
				Start: ledger.Time(r.Int64N(int64(time.Hour))), Period: period,
				Deadline: time.Duration(1 + r.Int64N(int64(period))),
				Burst:    ledger.Vector{float64(1 + r.IntN(64)), float64(1 + r.IntN(256)), float64(r.IntN(2))},
			},
			Class: QueueClass(r.IntN(3)),
			Used:  ledger.Vector{float64(r.IntN(5000)), float64(r.IntN(20000)), 0},
		}
		for j := range v.Accounts[i].Queue {
			v.Accounts[i].Queue[j].Walltime = time.Duration(r.IntN(100)) * time.Second
		}
	}
}

func TestQKnoblerKnobIsValidated(t *testing.T) {
	for _, rho := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		s := Settings{Policy: QKnobler, Quantum: time.Minute, Placement: Affinity, QKnoblerRho: rho}
		if err := s.Validate([]string{"cpu"}); err == nil {
			t.Errorf("ρ = %v accepted", rho)
		}
	}
	for _, rho := range []float64{0, 0.5, 1} {
		s := Settings{Policy: QKnobler, Quantum: time.Minute, Placement: Affinity, QKnoblerRho: rho}
		if err := s.Validate([]string{"cpu"}); err != nil {
			t.Errorf("ρ = %v refused: %v", rho, err)
		}
	}
	if _, err := ParsePolicy("qknobler"); err != nil {
		t.Errorf("qknobler is not a known policy: %v", err)
	}
}

func TestSoftFairness(t *testing.T) {
	capacity := ledger.Vector{100, 100}
	// B holds 10% (dominant) and waits; C holds 80% and wants nothing
	// more, but still counts on the holding side: θ = 0.8 − 0.1.
	got, err := SoftFairness(capacity, []AccountShare{
		{Weight: 1, Held: ledger.Vector{50, 10}, Waiting: true},
		{Weight: 1, Held: ledger.Vector{10, 5}, Waiting: true},
		{Weight: 1, Held: ledger.Vector{0, 80}},
	})
	if err != nil || math.Abs(got-0.7) > 1e-12 {
		t.Errorf("θ = %v (%v), want 0.8 − 0.1 = 0.7", got, err)
	}
	// Weight 2 halves an account's weighted share relative to weight 1
	// (weights are scaled to mean 1: 4/3 and 2/3).
	got, _ = SoftFairness(capacity, []AccountShare{
		{Weight: 2, Held: ledger.Vector{40, 0}, Waiting: true},
		{Weight: 1, Held: ledger.Vector{20, 0}, Waiting: true},
	})
	if math.Abs(got) > 1e-12 {
		t.Errorf("weighted shares 40/2 and 20/1 are equal, got θ %v", got)
	}
	if got, _ := SoftFairness(capacity, []AccountShare{{Weight: 1, Held: ledger.Vector{90, 0}}}); got != 0 {
		t.Errorf("nobody waits, θ = %v", got)
	}
	if _, err := SoftFairness(capacity, []AccountShare{{Weight: 1, Held: ledger.Vector{1}}}); err == nil {
		t.Error("a short vector was accepted")
	}
}

func TestQKnoblerTheorems(t *testing.T) {
	capacity := ledger.Vector{200, 1000}
	w := []float64{1, 1}
	d := []ledger.Vector{{1, 6}, {1, 2}}
	// Theorem 2 for Example 1: φ/Σw; CPU is the bottleneck resource, with
	// φ = (1/200)·(1/0.006 + 1/0.005) = 1.8333 at weights 1.
	si, err := QKnoblerSharingIncentive(capacity, w, d)
	if err != nil || math.Abs(si-1.8333333333/2) > 1e-6 {
		t.Errorf("sharing-incentive knob %v (%v), want φ/Σw = 0.9167", si, err)
	}
	// Theorem 1: θ shrinks as ρ grows and is 0 at ρ = 1.
	var prev = math.Inf(1)
	rhos := []float64{0, 0.25, 0.5, 0.75, 1}
	for _, rho := range rhos {
		th, err := QKnoblerThetaBound(capacity, w, d, rho)
		if err != nil {
			t.Fatal(err)
		}
		if th > prev {
			t.Errorf("θ bound %v at ρ = %v is above the bound at a smaller ρ", th, rho)
		}
		prev = th
	}
	if prev != 0 {
		t.Errorf("θ bound at ρ = 1 is %v, want 0", prev)
	}
	// At ρ = 0 nothing is reserved: A alone could take memory's whole
	// share (1000/6 tasks, dominant share 1), B all CPUs (share 1).
	if th, _ := QKnoblerThetaBound(capacity, w, d, 0); math.Abs(th-1) > 1e-9 {
		t.Errorf("θ bound at ρ = 0 is %v, want 1", th)
	}
	if _, err := QKnoblerThetaBound(capacity, w, d, 2); err == nil {
		t.Error("ρ = 2 accepted")
	}
	if _, err := QKnoblerThetaBound(capacity, w[:1], d, 0.5); err == nil {
		t.Error("one weight for two demands accepted")
	}
}

func TestQKnoblerLazyEfficiencyStageMatchesExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(66, 6))
	lazy, full := NewEngine(), NewEngine()
	full.knob.exhaustive = true
	for iter := range 300 {
		var v *View
		if iter%2 == 0 {
			v = randomView(r, QKnobler, Affinity)
		} else {
			v = randomBackloggedView(r)
		}
		v.Settings.QKnoblerRho = []float64{0, 0.25, 0.5, 0.9}[iter%4]
		want, err := full.Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]Placement(nil), want...)
		got, err := lazy.Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(want, got, samePlacement) {
			t.Fatalf("iteration %d: the lazy efficiency stage placed %d tasks differently from re-scoring every offer (%d)", iter, len(got), len(want))
		}
	}
}
