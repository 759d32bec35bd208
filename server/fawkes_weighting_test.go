package server

import (
	"math"
	"testing"
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// fawkesInput is a cluster of 10 cpu with accounts a, b and c of equal
// weight; waiting[i] pending single-cpu tasks (one job) and running[i]
// running ones for each, at time at.
func fawkesInput(cfg fawkes.Config, at time.Duration, waiting, running []int64, shares []float64) *fsm.FawkesInput {
	in := &fsm.FawkesInput{
		Now: ledger.Time(at), Policy: sched.Fawkes, Config: cfg, Resources: []string{"cpu"}, Capacity: ledger.Vector{10},
	}
	for i, name := range []string{"a", "b", "c"} {
		a := fsm.FawkesAccount{Name: name, Weight: 1, Share: shares[i], Running: ledger.Vector{float64(running[i])}}
		if waiting[i]+running[i] > 0 {
			a.Jobs = []fsm.FawkesJob{{ID: uint64(i + 1), Demand: ledger.Vector{1}, Walltime: time.Hour, Pending: waiting[i], Running: running[i]}}
		}
		in.Accounts = append(in.Accounts, a)
	}
	return in
}

func neverEnded(uint64) (int64, bool, bool) { return 0, false, false }

func near(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestFawkesWeightingFollowsTaskDemand(t *testing.T) {
	cfg := fawkes.Config{Weighting: fawkes.TD, Interval: time.Minute, Threshold: -1}
	none := []float64{0, 0, 0}
	in := fawkesInput(cfg, 0, []int64{30, 10, 0}, []int64{0, 0, 0}, none)
	w := newFawkesWeighting(in)
	// No partitions yet: the accounts with work split the cluster evenly.
	d := w.step(in, neverEnded)
	if !near(d.Shares, []float64{0.5, 0.5, 0}) {
		t.Fatalf("first partitions %v, want a and b half each", d.Shares)
	}
	committed := d.Shares
	// Committed partitions are not proposed again.
	in = fawkesInput(cfg, 20*time.Second, []int64{30, 10, 0}, []int64{0, 0, 0}, committed)
	if d := w.step(in, neverEnded); d.Shares != nil || d.Tick != nil {
		t.Fatalf("nothing changed, yet the step decided %+v", d)
	}
	// a waits for 30 tasks the whole minute, b for 10 for 20 s and then
	// for 50.
	in = fawkesInput(cfg, 20*time.Second, []int64{30, 50, 0}, []int64{0, 0, 0}, committed)
	w.step(in, neverEnded)
	in = fawkesInput(cfg, time.Minute, []int64{30, 50, 0}, []int64{0, 0, 0}, committed)
	d = w.step(in, neverEnded)
	if d.Tick == nil || !d.Tick.Resize {
		t.Fatalf("the interval ended without a resize: %+v", d.Tick)
	}
	// TD: weights ∝ the averages, 30 and (10·20 + 50·40)/60.
	avgB := (10.0*20 + 50*40) / 60
	want := []float64{30 / (30 + avgB), avgB / (30 + avgB), 0}
	if !near(d.Tick.Weights, want) {
		t.Fatalf("weights %v, want %v", d.Tick.Weights, want)
	}
	if !near(d.Shares, want) {
		t.Fatalf("partitions %v, want the weights %v (no minimum shares)", d.Shares, want)
	}
	committed = d.Shares
	// b runs out of work: its partition goes back to a at once.
	in = fawkesInput(cfg, 70*time.Second, []int64{30, 0, 0}, []int64{0, 0, 0}, committed)
	d = w.step(in, neverEnded)
	if !near(d.Shares, []float64{1, 0, 0}) {
		t.Fatalf("partitions after b ran out of work %v, want all to a", d.Shares)
	}
	// c gains work: it starts with the mean weight of the others.
	in = fawkesInput(cfg, 80*time.Second, []int64{30, 0, 5}, []int64{0, 0, 0}, d.Shares)
	d = w.step(in, neverEnded)
	if !near(d.Shares, []float64{0.5, 0, 0.5}) {
		t.Fatalf("partitions after c gained work %v, want a and c half each", d.Shares)
	}
}

func TestFawkesWeightingCountsCompletions(t *testing.T) {
	cfg := fawkes.Config{Weighting: fawkes.TT, Interval: time.Minute, Threshold: -1}
	in := fawkesInput(cfg, 0, []int64{10, 10, 0}, []int64{0, 0, 0}, []float64{0.5, 0.5, 0})
	w := newFawkesWeighting(in)
	w.step(in, neverEnded)
	// a finishes 10 tasks of its job during the interval; b none.
	in = fawkesInput(cfg, 30*time.Second, []int64{10, 10, 0}, []int64{0, 0, 0}, []float64{0.5, 0.5, 0})
	in.Accounts[0].Jobs[0].Done = 10
	w.step(in, neverEnded)
	in = fawkesInput(cfg, time.Minute, []int64{10, 10, 0}, []int64{0, 0, 0}, []float64{0.5, 0.5, 0})
	in.Accounts[0].Jobs[0].Done = 10
	d := w.step(in, neverEnded)
	// TT: y = 2^(−completed/waiting): a 2^−1, b 2^0.
	if d.Tick == nil || !near(d.Tick.Weights, []float64{0.5 / 1.5, 1 / 1.5, 0}) {
		t.Fatalf("task-throughput weights %+v, want 1/3 and 2/3", d.Tick)
	}
	// A job that left the active set is counted as it ended.
	in = fawkesInput(cfg, 90*time.Second, []int64{0, 10, 0}, []int64{0, 0, 0}, d.Shares)
	in.Accounts[0].Jobs = nil
	var asked []uint64
	w.step(in, func(id uint64) (int64, bool, bool) { asked = append(asked, id); return 20, true, true })
	if len(asked) != 1 || asked[0] != 1 {
		t.Fatalf("asked how jobs %v ended, want job 1", asked)
	}
}

// The leader samples once a second, so a step rarely falls exactly on the
// end of an interval; the intervals must still be T long (as the
// simulator's, which end exactly every T), not stretched by each late step.
func TestFawkesWeightingKeepsIntervalsTLong(t *testing.T) {
	cfg := fawkes.Config{Weighting: fawkes.TD, Interval: time.Minute, Threshold: -1}
	shares := []float64{0.5, 0.5, 0}
	w := newFawkesWeighting(fawkesInput(cfg, 0, []int64{30, 10, 0}, []int64{0, 0, 0}, shares))
	w.step(fawkesInput(cfg, 0, []int64{30, 10, 0}, []int64{0, 0, 0}, shares), neverEnded)
	if d := w.step(fawkesInput(cfg, 61*time.Second, []int64{30, 10, 0}, []int64{0, 0, 0}, shares), neverEnded); d.Tick == nil {
		t.Fatal("the first interval did not end at the step after it")
	}
	if d := w.step(fawkesInput(cfg, 2*time.Minute, []int64{30, 10, 0}, []int64{0, 0, 0}, shares), neverEnded); d.Tick == nil {
		t.Fatal("the second interval did not end at 2m: the late step at 61s stretched it")
	}
}
