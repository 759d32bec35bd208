package ledger

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestCostExample(t *testing.T) {
	// One hour of 4 cores and 10 GiB at cpu=1, mem=0.25/GiB: 4 + 2.5 = 6.5 SU.
	resources := []string{"cpu", "mem", "mic"}
	w, err := ParseBillingWeights("cpu=1, mem=0.25/GiB, mic=10", resources)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Cost(time.Hour, Vector{4, 10 << 30, 0}, w, BillingSum)
	if err != nil || got != 6_500_000 {
		t.Fatalf("Cost = %v, %v; want 6.5 SU", got, err)
	}
	// 90 minutes of one MIC: 15 SU.
	got, err = Cost(90*time.Minute, Vector{0, 0, 1}, w, BillingSum)
	if err != nil || got != 15*MicroPerSU {
		t.Fatalf("Cost = %v, %v; want 15 SU", got, err)
	}
}

// referenceCost computes the cost for weights that are multiples of 1/64
// (wn/64) and integer demands with integer arithmetic only, as an
// independent check of Cost's rational arithmetic and rounding.
func referenceCost(runtime time.Duration, demand []int64, wn []int64) int64 {
	s := new(big.Int)
	for k := range demand {
		s.Add(s, new(big.Int).Mul(big.NewInt(demand[k]), big.NewInt(wn[k])))
	}
	// micro = runtime × s / (64 × 3.6e6), rounded half up:
	// floor((2·runtime·s + D) / 2D) with D = 64 × 3.6e6.
	d := big.NewInt(64 * 3_600_000)
	num := new(big.Int).Mul(big.NewInt(int64(runtime)), s)
	num.Lsh(num, 1).Add(num, d)
	return num.Div(num, d.Lsh(d, 1)).Int64()
}

func TestCostMatchesIntegerReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		n := 1 + rng.IntN(4)
		demand, wn := make([]int64, n), make([]int64, n)
		d, w := make(Vector, n), make(BillingWeights, n)
		for k := range n {
			demand[k], wn[k] = rng.Int64N(1<<20), rng.Int64N(1<<12)
			d[k], w[k] = float64(demand[k]), float64(wn[k])/64
		}
		runtime := time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))
		got, err := Cost(runtime, d, w, BillingSum)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceCost(runtime, demand, wn); int64(got) != want {
			t.Fatalf("Cost(%v, %v, %v, BillingSum) = %d micro-SU, want %d", runtime, d, w, got, want)
		}
	}
}

func TestCostRoundsHalfUp(t *testing.T) {
	// Weight 1/64 SU per unit-hour and demand 1: 115.2 ms cost exactly half
	// a micro-SU, which rounds up; one nanosecond less rounds down.
	w := BillingWeights{1.0 / 64}
	half := 115_200_000 * time.Nanosecond
	for _, c := range []struct {
		runtime time.Duration
		want    SU
	}{{half, 1}, {half - 1, 0}, {3 * half, 2}, {3*half - 1, 1}} {
		got, err := Cost(c.runtime, Vector{1}, w, BillingSum)
		if err != nil || got != c.want {
			t.Errorf("Cost(%v) = %v, %v; want %d micro-SU", c.runtime, got, err, c.want)
		}
	}
}

func TestCostIsMonotoneAndWorstCaseCoversCharges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		d := Vector{float64(1 + rng.IntN(64)), rng.Float64() * (1 << 36), float64(rng.IntN(3))}
		w := BillingWeights{rng.Float64() * 3, rng.Float64() / (1 << 30), rng.Float64() * 20}
		walltime := time.Duration(1 + rng.Int64N(int64(48*time.Hour)))
		tasks := 1 + rng.IntN(50)
		hold, err := WorstCaseHold(tasks, walltime, d, w, BillingSum)
		if err != nil {
			t.Fatal(err)
		}
		var charged SU
		for range tasks {
			runtime := time.Duration(rng.Int64N(int64(walltime) + 1))
			c, err := Cost(runtime, d, w, BillingSum)
			if err != nil {
				t.Fatal(err)
			}
			longer, _ := Cost(runtime+time.Duration(rng.Int64N(1000)), d, w, BillingSum)
			if longer < c {
				t.Fatalf("Cost is not monotone: %v costs %v but a longer runtime costs %v", runtime, c, longer)
			}
			charged += c
		}
		if charged > hold {
			t.Fatalf("%d tasks within walltime %v charged %v, more than their worst-case hold %v", tasks, walltime, charged, hold)
		}
	}
}

func TestCostRefusesBadInput(t *testing.T) {
	w := BillingWeights{1, 1}
	cases := []struct {
		name    string
		runtime time.Duration
		demand  Vector
		w       BillingWeights
		reason  string
	}{
		{"negative runtime", -time.Second, Vector{1, 1}, w, "negative"},
		{"short demand", time.Hour, Vector{1}, w, "want 2"},
		{"short weights", time.Hour, Vector{1, 1}, BillingWeights{1}, "want 1"},
		{"NaN demand", time.Hour, Vector{math.NaN(), 1}, w, "finite"},
		{"negative demand", time.Hour, Vector{-1, 1}, w, "non-negative"},
		{"infinite weight", time.Hour, Vector{1, 1}, BillingWeights{math.Inf(1), 0}, "finite"},
		{"overflow", 1000 * time.Hour, Vector{1e300, 0}, w, "costs more than"},
	}
	for _, c := range cases {
		_, err := Cost(c.runtime, c.demand, c.w, BillingSum)
		if !errors.Is(err, ErrCost) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: Cost error = %v; want ErrCost mentioning %q", c.name, err, c.reason)
		}
	}
	if _, err := WorstCaseHold(-1, time.Hour, Vector{1, 1}, w, BillingSum); !errors.Is(err, ErrCost) {
		t.Errorf("WorstCaseHold with -1 tasks: %v, want ErrCost", err)
	}
	if _, err := WorstCaseHold(math.MaxInt, time.Hour, Vector{1, 1}, w, BillingSum); !errors.Is(err, ErrCost) {
		t.Errorf("WorstCaseHold overflowing: %v, want ErrCost", err)
	}
	if got, err := WorstCaseHold(1000, time.Hour, Vector{1, 1}, w, BillingSum); err != nil || got != 2000*MicroPerSU {
		t.Errorf("WorstCaseHold(1000 × 1h × 2 SU/h) = %v, %v; want 2000 SU", got, err)
	}
}

func TestParseBillingWeights(t *testing.T) {
	resources := []string{"cpu", "mem", "mic", "gpu"}
	w, err := ParseBillingWeights("mic=10,cpu=1.5, mem = 2/MiB", resources)
	if err != nil {
		t.Fatal(err)
	}
	want := BillingWeights{1.5, 2.0 / (1 << 20), 10, 0}
	for k := range want {
		if w[k] != want[k] {
			t.Fatalf("weights = %v, want %v", w, want)
		}
	}
	if w, err := ParseBillingWeights("", resources); err != nil || len(w) != 4 || w[0] != 0 {
		t.Fatalf("empty spec = %v, %v; want four zero weights", w, err)
	}
	bad := []struct{ spec, reason string }{
		{"tpu=1", "cpu, mem, mic, gpu"},
		{"cpu=1,cpu=2", "twice"},
		{"cpu", "resource=weight"},
		{"cpu=", "resource=weight"},
		{"cpu=-1", "non-negative"},
		{"cpu=NaN", "finite"},
		{"cpu=Inf", "finite"},
		{"mem=1/GB", "unknown unit"},
	}
	for _, c := range bad {
		if _, err := ParseBillingWeights(c.spec, resources); err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("ParseBillingWeights(%q) error = %v; want one mentioning %q", c.spec, err, c.reason)
		}
	}
}

func TestBillingWeightsFormatRoundTrips(t *testing.T) {
	resources := []string{"cpu", "mem", "mic"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		w := make(BillingWeights, len(resources))
		for k := range w {
			if rng.IntN(3) > 0 {
				w[k] = rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		back, err := ParseBillingWeights(w.Format(resources), resources)
		if err != nil {
			t.Fatalf("Format %q does not parse: %v", w.Format(resources), err)
		}
		for k := range w {
			if back[k] != w[k] {
				t.Fatalf("weights %v formatted as %q read back as %v", w, w.Format(resources), back)
			}
		}
	}
	if got := (BillingWeights{0, 0, 0, 2}).Format(resources); got != "#3=2" {
		t.Errorf("Format of a weight beyond the resource list = %q, want #3=2", got)
	}
}

// TestCostFastPathIsExact checks the float fast path against the exact
// computation on random inputs and on runtimes placed right at rounding
// boundaries, and that both paths are exercised.
func TestCostFastPathIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var fast, fallback int
	check := func(runtime time.Duration, d Vector, w BillingWeights) {
		t.Helper()
		for _, rule := range []BillingRule{BillingSum, BillingMax} {
			exact, ok := costExact(runtime, d, w, rule)
			got, answered := costFast(runtime, d, w, rule)
			if !ok {
				if answered {
					t.Fatalf("fast path answered %d for %v %v %v (%v), which overflows an SU", got, runtime, d, w, rule)
				}
				continue
			}
			if !answered {
				fallback++
				continue
			}
			fast++
			if got != exact {
				t.Fatalf("fast %v cost of %v %v %v = %d, exact %d", rule, runtime, d, w, got, exact)
			}
		}
	}
	for range 5000 {
		n := 1 + rng.IntN(5)
		d, w := make(Vector, n), make(BillingWeights, n)
		for k := range n {
			d[k] = rng.ExpFloat64() * math.Pow(2, float64(rng.IntN(80)-20))
			w[k] = rng.ExpFloat64() * math.Pow(2, float64(rng.IntN(80)-70))
		}
		check(time.Duration(rng.Int64N(int64(1000*time.Hour))), d, w)
	}
	// 1/64 SU per unit-hour: (2m+1) × 115.2 ms costs exactly m + 0.5
	// micro-SU; a nanosecond either side lies just below or above it.
	w := BillingWeights{1.0 / 64}
	for range 5000 {
		m := rng.Int64N(1 << 30)
		at := time.Duration(2*m+1) * 115_200_000
		for _, r := range []time.Duration{at - 1, at, at + 1} {
			check(r, Vector{1}, w)
		}
	}
	t.Logf("fast path answered %d times, fell back %d times", fast, fallback)
	if fast == 0 || fallback == 0 {
		t.Fatalf("fast path answered %d times and fell back %d times; both must be exercised", fast, fallback)
	}
}
