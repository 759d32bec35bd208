package fawkes

import (
	"math"
	"testing"
)

func TestActiveWeights(t *testing.T) {
	weights := []float64{2, 0, 6, 4}
	active := []bool{true, true, false, true}
	// Active accounts with a weight: 2 and 4.
	if got := MeanActiveWeight(weights, active); got != 3 {
		t.Errorf("mean active weight %v, want 3", got)
	}
	if got := MeanActiveWeight(weights, []bool{false, true, false, false}); got != 1 {
		t.Errorf("mean weight with no weighted active account %v, want 1", got)
	}
	got := NormalizeActive(weights, active)
	want := []float64{2.0 / 6, 0, 0, 4.0 / 6}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("normalized %v, want %v", got, want)
		}
	}
	for _, c := range []struct{ used, partition, want float64 }{{0, 4, 0}, {2, 4, 0.5}, {8, 4, 1}, {1, 0, 1}} {
		if got := PartitionUse(c.used, c.partition); got != c.want {
			t.Errorf("PartitionUse(%v, %v) = %v, want %v", c.used, c.partition, got, c.want)
		}
	}
}
