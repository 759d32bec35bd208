package fawkes

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

func TestParseWeighting(t *testing.T) {
	for _, w := range Weightings() {
		got, err := ParseWeighting(strings.ToUpper(string(w)))
		if err != nil || got != w {
			t.Errorf("ParseWeighting(%q) = %q, %v", strings.ToUpper(string(w)), got, err)
		}
	}
	_, err := ParseWeighting("fifo")
	if err == nil || !strings.Contains(err.Error(), "td") {
		t.Errorf("an unknown weighting must be refused with the valid names, got %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	res := []string{"cpu", "mem"}
	if err := (Config{}).Validate(res); err != nil {
		t.Fatalf("the zero config (all defaults) is refused: %v", err)
	}
	bad := map[string]Config{
		"weighting":          {Weighting: "fifo"},
		"upper-case name":    {Weighting: "TD"},
		"negative interval":  {Interval: -time.Second},
		"nan threshold":      {Threshold: math.NaN()},
		"psi above 1":        {Psi: 1.5},
		"negative psi":       {Psi: -0.1},
		"base 1":             {Base: 1},
		"guarantee above 1":  {Guarantee: 2},
		"none without floor": {Weighting: None},
		"unknown disk":       {Disk: "gpu"},
	}
	for name, c := range bad {
		err := c.Validate(res)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "fawkes") {
			t.Errorf("%s: error %q does not say it is about fawkes", name, err)
		}
	}
}

func TestWeightsFollowTheirMeasure(t *testing.T) {
	avg := []Averages{
		{Sample: Sample{WaitingJobs: 1, WaitingTasks: 10, WaitingWork: 5, ProcessorUse: 0.5, DiskUse: 1, Slowdown: 3}, CompletedJobs: 1, CompletedTasks: 10},
		{Sample: Sample{WaitingJobs: 3, WaitingTasks: 30, WaitingWork: 15, ProcessorUse: 1, DiskUse: 0, Slowdown: 1}, CompletedJobs: 0, CompletedTasks: 0},
		{Sample: Sample{WaitingJobs: 9, WaitingTasks: 90}},
	}
	active := []bool{true, true, false}
	cases := map[Weighting][]float64{
		JD: {0.25, 0.75, 0},
		TD: {0.25, 0.75, 0},
		DD: {0.25, 0.75, 0},
		PU: {1.0 / 3, 2.0 / 3, 0},
		DU: {1, 0, 0},
		RU: {0.75 / 1.25, 0.5 / 1.25, 0}, // ψ = 0.5: 0.75 and 0.5
		JS: {0.75, 0.25, 0},
		// a = 2: q = 1 gives 2^−1, q = 0 gives 2^0.
		JT:    {0.5 / 1.5, 1 / 1.5, 0},
		TT:    {0.5 / 1.5, 1 / 1.5, 0},
		Equal: {0.5, 0.5, 0},
	}
	for w, want := range cases {
		got := Weights(Config{Weighting: w}, avg, active)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s: weights %v, want %v", w, got, want)
				break
			}
		}
	}
	// Nobody waiting: TD has nothing to go by and weighs the active equally.
	got := Weights(Config{Weighting: TD}, []Averages{{}, {}, {}}, []bool{true, false, true})
	if got[0] != 0.5 || got[1] != 0 || got[2] != 0.5 {
		t.Errorf("TD with nothing waiting: %v, want 0.5, 0, 0.5", got)
	}
}

// referenceShares solves Σ_active max(min_i, λ·w_i) = 1 for λ by bisection.
func referenceShares(weights, mins []float64, active []bool) []float64 {
	total := func(l float64) float64 {
		s := 0.0
		for i := range weights {
			if active[i] {
				s += math.Max(mins[i], l*weights[i])
			}
		}
		return s
	}
	lo, hi := 0.0, 1.0
	for total(hi) < 1 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if total(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(weights))
	for i := range weights {
		if active[i] {
			out[i] = math.Max(mins[i], hi*weights[i])
		}
	}
	return out
}

func TestSharesAgreeWithTheReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for iter := range 2000 {
		n := 1 + r.IntN(8)
		weights, mins, active := make([]float64, n), make([]float64, n), make([]bool, n)
		anyWeight := false
		for i := range n {
			active[i] = r.IntN(5) > 0
			if r.IntN(4) > 0 {
				weights[i] = r.Float64()
			}
			mins[i] = r.Float64() * 0.8 / float64(n)
			anyWeight = anyWeight || (active[i] && weights[i] > 0)
		}
		if !anyWeight {
			continue
		}
		got := Shares(Config{}, weights, mins, active)
		want := referenceShares(weights, mins, active)
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Fatalf("iteration %d: shares %v, reference %v (weights %v, mins %v, active %v)", iter, got, want, weights, mins, active)
			}
		}
	}
}

func TestSharesKeepMinimumsAndBaselines(t *testing.T) {
	mins := []float64{0.2, 0.2, 0.2}
	active := []bool{true, true, false}
	if s := Shares(Config{Weighting: None, Guarantee: 1}, []float64{0.9, 0.1, 0}, mins, active); s[0] != 0.2 || s[1] != 0.2 || s[2] != 0 {
		t.Errorf("none: shares %v, want the minimums of the active accounts", s)
	}
	s := Shares(Config{}, []float64{1, 0, 0}, mins, active)
	if math.Abs(s[0]-0.8) > 1e-12 || s[1] != 0.2 || s[2] != 0 {
		t.Errorf("all weight on one account: shares %v, want 0.8 and the other's minimum 0.2", s)
	}
	s = Shares(Config{}, []float64{0.5, 0.5, 0}, []float64{0.7, 0.7, 0}, active)
	if math.Abs(s[0]-0.5) > 1e-12 || math.Abs(s[1]-0.5) > 1e-12 {
		t.Errorf("minimums over the whole cluster must be scaled to fit: %v", s)
	}
	if m := MinimumShares(Config{Guarantee: 0.625}, []float64{1, 1, 2}); math.Abs(m[2]-0.3125) > 1e-12 || math.Abs(m[0]-0.15625) > 1e-12 {
		t.Errorf("minimum shares %v, want 0.625 of each contribution share", m)
	}
}

func TestMeterAveragesOverTheInterval(t *testing.T) {
	sec := func(s int) ledger.Time { return ledger.Time(time.Duration(s) * time.Second) }
	m := NewMeter(Config{Weighting: TD, Interval: 2 * time.Minute, Threshold: -1}, 2, 0)
	m.Set(0, Sample{WaitingTasks: 10, Slowdown: 1, SlowdownGrowth: 0.1}, 0.5)
	m.Set(1, Sample{WaitingTasks: 0}, 0.5)
	m.Advance(sec(30))
	m.Set(0, Sample{WaitingTasks: 20}, 1)
	m.Set(1, Sample{WaitingTasks: 0}, 0)
	m.Completed(1, 1, 4)
	if got := m.NextTick(); got != sec(120) {
		t.Fatalf("next tick at %v, want 120 s", got)
	}
	d := m.Tick(sec(120), []bool{true, true}, []float64{0, 0})
	// Account 0 waited 10 tasks for 30 s and 20 for 90 s: 17.5 on average.
	if got := d.Averages[0].WaitingTasks; math.Abs(got-17.5) > 1e-12 {
		t.Errorf("average waiting tasks %v, want 17.5", got)
	}
	// Its slowdown went from 1 to 4 over 30 s, then 0: ∫ = 75, over 120 s.
	if got := d.Averages[0].Slowdown; math.Abs(got-75.0/120) > 1e-12 {
		t.Errorf("average slowdown %v, want %v", got, 75.0/120)
	}
	if d.Averages[1].CompletedTasks != 4 || d.Averages[1].CompletedJobs != 1 {
		t.Errorf("completions %+v, want 1 job and 4 tasks", d.Averages[1])
	}
	// TD gives account 0 everything; it held 0.5 for 30 s and 1 for 90 s:
	// D_0 = 105 − 120 = −15, D_1 = 15 − 0 = 15; Var(D) = 225.
	if d.Shares[0] != 1 || d.Shares[1] != 0 {
		t.Errorf("shares %v, want 1 and 0", d.Shares)
	}
	if math.Abs(d.Discrimination[0]+15) > 1e-9 || math.Abs(d.Discrimination[1]-15) > 1e-9 || math.Abs(d.Variance-225) > 1e-9 {
		t.Errorf("discrimination %v variance %v, want −15, 15 and 225", d.Discrimination, d.Variance)
	}
	if !d.Resize {
		t.Errorf("a negative threshold resizes at every interval")
	}
	// The next interval starts afresh.
	if got := m.NextTick(); got != sec(240) {
		t.Errorf("next tick at %v, want 240 s", got)
	}
	d = m.Tick(sec(240), []bool{true, true}, []float64{0, 0})
	if d.Averages[1].CompletedTasks != 0 || math.Abs(d.Averages[0].WaitingTasks-20) > 1e-12 {
		t.Errorf("second interval averages %+v, want 20 waiting and no completions carried over", d.Averages)
	}
}

func TestResizeOnlyAboveTheThreshold(t *testing.T) {
	m := NewMeter(Config{Weighting: TD, Interval: time.Minute, Threshold: 1000}, 2, 0)
	m.Set(0, Sample{WaitingTasks: 1}, 0.5)
	m.Set(1, Sample{WaitingTasks: 1}, 0.4)
	d := m.Tick(ledger.Time(time.Minute), []bool{true, true}, []float64{0, 0})
	if d.Resize {
		t.Errorf("Var(D) %v is below τ = 1000 but the meter resizes", d.Variance)
	}
	if got := Variance([]float64{3, -3}); got != 9 {
		t.Errorf("Variance(3, −3) = %v, want 9", got)
	}
	if got := Held(ledger.Vector{4, 0, 1}, ledger.Vector{8, 16, 0}); got != 0.25 {
		t.Errorf("Held = %v, want the mean of 4/8 and 0/16, 0.25 (a resource the cluster lacks does not count)", got)
	}
}

// Every weighting the package implements is in the list the API checks
// requests by, and nothing else is.
func TestWeightingsListsEveryWeighting(t *testing.T) {
	all := []Weighting{None, Equal, JD, DD, TD, PU, DU, RU, JS, JT, TT}
	got := Weightings()
	if len(got) != len(all) {
		t.Fatalf("Weightings() = %v, want the %d weightings %v", got, len(all), all)
	}
	for _, w := range all {
		if !slices.Contains(got, w) {
			t.Errorf("Weightings() = %v lacks %q", got, w)
		}
	}
}
