package reproduce

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/shareddata"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

func TestReadGoogle(t *testing.T) {
	const trace = `1000000,,7,0,,0,alice,0,0,0.0125,0.0159,0.0004,0
2000000,,7,0,11,1,alice,0,0,0.0125,0.0159,0.0004,0
3000000,,7,0,11,2,alice,0,0,,,,
4000000,,7,0,12,1,alice,0,0,0.0125,0.0159,0.0004,0
9000000,,7,0,12,4,alice,0,0,0.0125,0.0159,0.0004,0
1500000,,8,3,,0,bob,0,0,0.25,0.01,0,0
2500000,,8,3,13,1,bob,0,0,0.25,0.01,0,0
3500000,,8,3,13,4,bob,0,0,0.25,0.01,0,0
2500000,,9,0,14,1,carol,0,0,0.1,0.1,0,0
8000000,,9,0,14,4,carol,0,0,0.1,0.1,0,0
1600000,,10,0,,0,dave,0,0,0.1,0.1,0,0
`
	w, err := sim.ReadGoogle("part.csv", strings.NewReader(trace), sim.GoogleOptions{Machines: 3})
	if err != nil {
		t.Fatal(err)
	}
	// carol's task was submitted before the slice and dave's never ran:
	// both are left out.
	if len(w.Jobs) != 2 || len(w.Accounts) != 2 || len(w.Nodes) != 3 {
		t.Fatalf("%d jobs, %d accounts, %d nodes; want alice's and bob's tasks, 2 accounts, 3 machines", len(w.Jobs), len(w.Accounts), len(w.Nodes))
	}
	alice, bob := w.Jobs[0], w.Jobs[1]
	// Alice was evicted and restarted: her run is from the last start.
	if alice.Submit != 0 || alice.Runtime != 5*time.Second || alice.Account != 0 || !alice.Demand.Fits(ledger.Vector{0.0125, 0.0159}) {
		t.Errorf("alice's task: %+v, want submitted at 0, 5 s from its restart to its finish", alice)
	}
	if bob.Submit != ledger.Time(500*time.Millisecond) || bob.Runtime != time.Second || bob.Account != 1 {
		t.Errorf("bob's task: %+v, want submitted 0.5 s after alice's, running 1 s", bob)
	}
	if len(w.Notes) == 0 || !strings.Contains(w.Notes[0], "2 tasks cross") {
		t.Errorf("notes %q do not say how many tasks were left out", w.Notes)
	}
	for name, bad := range map[string]string{
		"short line":    "1,2,3\n",
		"bad time":      "x,,7,0,,0,alice,0,0,0.1,0.1,0,0\n",
		"bad request":   "1,,7,0,,0,alice,0,0,1.5,0.1,0,0\n",
		"bad event":     "1,,7,0,,zero,alice,0,0,0.1,0.1,0,0\n",
		"nothing whole": "1,,7,0,,0,alice,0,0,0.1,0.1,0,0\n",
	} {
		_, err := sim.ReadGoogle("part.csv", strings.NewReader(bad), sim.GoogleOptions{})
		var ie *sim.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "part.csv") {
			t.Errorf("%s: %v, want an input error naming the file", name, err)
		}
	}
}

func TestLoadGoogleTrace(t *testing.T) {
	path := shareddata.Path(t, "google-2011/task_events-part-00235-of-00500.csv.gz")
	w, err := sim.LoadGoogle(path, sim.GoogleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// PROVENANCE.md: 9,727 FINISH events in the part; each kept task ends
	// with one, and the slice lasts about 83.5 minutes.
	if n := len(w.Jobs); n < 1000 || n > 9727 {
		t.Errorf("%d tasks kept from a part with 9,727 finish events", n)
	}
	for _, j := range w.Jobs {
		if j.Submit < 0 || j.Submit > ledger.Time(84*time.Minute) || j.Runtime > 84*time.Minute {
			t.Fatalf("task %s submitted at %v and running %v does not lie in the slice", j.Name, time.Duration(j.Submit), j.Runtime)
		}
	}
	if len(w.Accounts) < 10 {
		t.Errorf("%d users: the part has tasks of dozens of users", len(w.Accounts))
	}
}

// checkSweepShape checks what the QKnobler paper reports, as shapes: θ grows
// as the knob falls, what it adds to drf's stays within Theorem 1, ρ = 1 is
// drf, and the efficiency while work waits is better at ρ = 0.
func checkSweepShape(t *testing.T, s *QKnoblerSweepResult) {
	t.Helper()
	if !s.IdenticalToDRF {
		t.Error("qknobler at ρ = 1 did not place every task as drf did")
	}
	low, one := s.Points[0], s.Points[len(s.Points)-1]
	if low.Rho != 0 || one.Rho != 1 {
		t.Fatalf("sweep points %v…%v, want ρ from 0 to 1", low.Rho, one.Rho)
	}
	if low.Theta <= one.Theta {
		t.Errorf("θ at ρ = 0 is %.3f, not above ρ = 1's %.3f: the knob does not trade fairness", low.Theta, one.Theta)
	}
	for _, p := range s.Points {
		// Without preemption drf itself is not instantly fair (a newcomer
		// waits for tasks to end); Theorem 1 bounds what the efficiency
		// stage adds to that.
		if p.Theta-s.DRF.Theta > p.ThetaBound+1e-9 {
			t.Errorf("ρ = %.2f: θ %.3f exceeds drf's %.3f by more than Theorem 1's %.3f", p.Rho, p.Theta, s.DRF.Theta, p.ThetaBound)
		}
	}
	if low.Efficiency <= one.Efficiency {
		t.Errorf("efficiency while work waits at ρ = 0 is %.4f, not above ρ = 1's %.4f", low.Efficiency, one.Efficiency)
	}
}

func TestQKnoblerSweepOnThePapersTestbedMix(t *testing.T) {
	w, err := QKnoblerTestbed(MacroOptions{Seed: 1, FacebookTimes: shareddata.Optional("FB-2009_samples_24_times_1hr_1.tsv")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := QKnoblerSweep(w, sim.Config{Settings: sched.Settings{Quantum: time.Minute, Placement: sched.Affinity}}, []float64{0, 0.25, 0.5, 0.75})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteQKnoblerSweep(&b, s); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	checkSweepShape(t, s)
	// The paper: jobs finish faster as the knob falls (up to 57% in its
	// testbed, 26.7% in its simulation).
	if sp := s.Points[0].CompletionSpeedup; sp <= 1 {
		t.Errorf("mean completion at ρ = 0 is %.3f× ρ = 1's: the efficiency stage should speed jobs up", sp)
	}
}

func TestQKnoblerSweepOnGoogleTrace(t *testing.T) {
	path := shareddata.Path(t, "google-2011/task_events-part-00235-of-00500.csv.gz")
	w, err := sim.LoadGoogle(path, sim.GoogleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := QKnoblerSweep(w, sim.Config{Settings: sched.Settings{Quantum: time.Minute, Placement: sched.Affinity}}, []float64{0, 0.25, 0.5, 0.75, 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteQKnoblerSweep(&b, s); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	checkSweepShape(t, s)
}

func TestQKnoblerMeterAgreesWithSoftFairness(t *testing.T) {
	// Two accounts on one machine: A's long task holds half the CPUs while
	// B's task waits behind it, so θ = ½ for the whole contended second.
	w := &sim.Workload{
		Name: "meter", Resources: []string{"cpu"},
		Nodes:    []sim.Node{{ID: "n", Capacity: ledger.Vector{2}}},
		Accounts: []sim.Account{{Name: "A", Weight: 1}, {Name: "B", Weight: 1}},
		Jobs: []sim.Job{
			{ID: 1, Account: 0, Demand: ledger.Vector{1}, Tasks: 1, Runtime: 2 * time.Second},
			{ID: 2, Account: 0, Demand: ledger.Vector{1}, Tasks: 1, Runtime: time.Second},
			{ID: 3, Account: 1, Submit: ledger.Time(time.Millisecond), Demand: ledger.Vector{2}, Tasks: 1, Runtime: time.Second},
		},
	}
	m := sim.NewQKnoblerMeter(w)
	if _, err := sim.Run(w, sim.Config{Settings: sched.Settings{Policy: sched.DRF, Quantum: time.Second, Placement: sched.Affinity}, Trace: m.Observe}); err != nil {
		t.Fatal(err)
	}
	// 0–1 ms: A holds 2 CPUs, nobody waits. 1 ms–1 s: A holds 2, B waits:
	// θ = 1. 1–2 s: A holds 1, B waits: θ = ½. Then B runs alone.
	want := (1*0.999 + 0.5*1) / 1.999
	if got := m.MeanContended(); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("θ while B waited: %.6f, want %.6f", got, want)
	}
	if m.Max() != 1 {
		t.Errorf("θ max %v, want 1", m.Max())
	}
	if e := m.EfficiencyContended(); e < 0.749 || e > 0.751 {
		t.Errorf("efficiency while B waited: %v, want (1·0.999 + 0.5·1)/1.999 ≈ 0.75", e)
	}
}
