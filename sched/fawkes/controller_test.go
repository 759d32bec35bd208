package fawkes

import (
	"math"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// stepInput is two accounts on a cluster of 10 processors, each waiting
// for one job of waiting[i] one-processor tasks of a minute.
func stepInput(at time.Duration, waiting ...int64) *StepInput {
	in := &StepInput{Now: ledger.Time(at), Mins: make([]float64, len(waiting)), Processors: 10}
	for _, n := range waiting {
		var a Account
		a.Work = n > 0
		a.Wait(WaitingJob{Tasks: n, TaskTime: time.Minute, TaskHeld: 0.1, Waited: at, Alone: time.Minute})
		in.Accounts = append(in.Accounts, a)
	}
	return in
}

func nearly(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestControllerFirstStepPartitionsTheAccountsWithWork(t *testing.T) {
	c := NewController(Config{Weighting: TD, Interval: time.Minute, Threshold: -1}, 0, []float64{0, 0, 0}, []bool{false, false, false})
	d := c.Step(stepInput(0, 30, 10, 0))
	if d.Tick != nil || !nearly(d.Shares, []float64{0.5, 0.5, 0}) {
		t.Fatalf("first step %+v, want a and b half each and no tick", d)
	}
	if d := c.Step(stepInput(10*time.Second, 30, 10, 0)); d.Shares != nil || d.Tick != nil {
		t.Fatalf("nothing changed, yet the step decided %+v", d)
	}
}

// The intervals are T long whenever the steps fall: a step after the end
// of an interval ends it at its end, and every interval due by then ends
// in turn.
func TestControllerKeepsIntervalsOnTheirGrid(t *testing.T) {
	c := NewController(Config{Weighting: TD, Interval: time.Minute, Threshold: -1}, 0, []float64{0, 0}, []bool{false, false})
	c.Step(stepInput(0, 30, 10))
	d := c.Step(stepInput(61*time.Second, 30, 10))
	if d.Tick == nil || !nearly(d.Tick.Weights, []float64{0.75, 0.25}) {
		t.Fatalf("step after the first minute: tick %+v, want weights 3:1", d.Tick)
	}
	if got := c.NextTick(); got != ledger.Time(2*time.Minute) {
		t.Fatalf("next interval ends at %v, want 2m: the late step must not stretch the grid", got)
	}
	if d := c.Step(stepInput(2*time.Minute, 30, 10)); d.Tick == nil {
		t.Fatal("the second interval did not end at 2m")
	}
	if d := c.Step(stepInput(250*time.Second, 30, 10)); d.Tick == nil || c.NextTick() != ledger.Time(5*time.Minute) {
		t.Fatalf("after a step at 4m10s the next interval ends at %v, want 5m (tick %v)", c.NextTick(), d.Tick)
	}
}

// Completions told at a step count in the interval that step ends.
func TestControllerCountsCompletionsIntoTheEndingInterval(t *testing.T) {
	c := NewController(Config{Weighting: TT, Interval: time.Minute, Threshold: -1}, 0, []float64{0.5, 0.5}, []bool{true, true})
	c.Step(stepInput(0, 10, 10))
	in := stepInput(time.Minute, 10, 10)
	in.Accounts[0].Done = Completions{Jobs: 1, Tasks: 10}
	d := c.Step(in)
	// TT: y = 2^(−completed/waiting): a 2^−1, b 2^0.
	if d.Tick == nil || !nearly(d.Tick.Weights, []float64{0.5 / 1.5, 1 / 1.5}) {
		t.Fatalf("task-throughput weights %+v, want 1/3 and 2/3", d.Tick)
	}
}

func TestSlowdownHasAFloor(t *testing.T) {
	for _, c := range []struct {
		waited, alone    time.Duration
		slowdown, growth float64
	}{
		{5 * time.Second, time.Second, 0.5, 0.1}, // measured against the 10 s floor
		{time.Minute, 30 * time.Second, 2, 1.0 / 30},
		{-time.Second, time.Minute, 0, 1.0 / 60}, // a clock step back waits no time
	} {
		s, g := Slowdown(c.waited, c.alone)
		if math.Abs(s-c.slowdown) > 1e-12 || math.Abs(g-c.growth) > 1e-12 {
			t.Errorf("Slowdown(%v, %v) = %v, %v; want %v, %v", c.waited, c.alone, s, g, c.slowdown, c.growth)
		}
	}
}
