package ledger

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestResourceUnitRoundUp(t *testing.T) {
	for _, c := range []struct {
		resource string
		in, want float64
	}{
		{"cpu", 1, 1},
		{"cpu", 0.01, 0.01},
		{"cpu", 0.07, 0.07}, // 0.07×100 is 7.000000000000001 in binary: still 7 units
		{"cpu", 0.29, 0.29},
		{"cpu", 0.333, 0.34},
		{"cpu", 2.5, 2.5},
		{"mem", 1 << 30, 1 << 30},
		{"mem", 2e9, 1908 << 20}, // 1907.35 MiB rounds up, as Slurm does
		{"gpumem", 3 << 20, 3 << 20},
		{"mic", 1, 1},
		{"gpu", 1.5, 2},
		{"cpu", 0, 0},
	} {
		got, err := ResourceUnit(c.resource).RoundUp("demand["+c.resource+"]", c.in)
		if err != nil || got != c.want {
			t.Errorf("RoundUp(%s %v) = %v, %v; want %v", c.resource, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		resource string
		in       float64
		want     string // in the error, besides the field
	}{
		{"cpu", 0.000001, "0.01 core"},
		{"cpu", 1e-300, "0.01 core"},
		{"cpu", 0.005, "at least 0.01"},
		{"mem", 4, "MiB"},
		{"mic", 0.5, "whole"},
		{"cpu", math.NaN(), "finite"},
		{"cpu", math.Inf(1), "finite"},
		{"cpu", -1, "finite"},
		{"mem", 2e18, "finite"},
	} {
		_, err := ResourceUnit(c.resource).RoundUp("demand["+c.resource+"]", c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "demand["+c.resource+"]") {
			t.Errorf("RoundUp(%s %v) = %v; want an error naming the field and %q", c.resource, c.in, err, c.want)
		}
	}
}

func TestResourceUnitFloor(t *testing.T) {
	if got := ResourceUnit("mem").Floor(16318316544); got != 15562<<20 {
		t.Errorf("Floor(16318316544 bytes) = %v, want 15562 MiB", got)
	}
	if got := ResourceUnit("cpu").Floor(3.999); got != 3.99 {
		t.Errorf("Floor(3.999 cores) = %v, want 3.99", got)
	}
	if got := ResourceUnit("cpu").Floor(0.07); got != 0.07 {
		t.Errorf("Floor(0.07 cores) = %v, want 0.07", got)
	}
	for _, x := range []float64{-1, math.NaN(), math.Inf(1), 0} {
		if got := ResourceUnit("cpu").Floor(x); got != 0 {
			t.Errorf("Floor(%v) = %v, want 0", x, got)
		}
	}
}

// TestAddUnitsKeepsFreeVectorsExact: a node's free vector, changed in whole
// units, fills exactly (a hundred 0.01-core tasks fit one core and the
// 101st does not) and comes back to its capacity bit for bit after any
// sequence of starts and ends, where plain float sums drift.
func TestAddUnitsKeepsFreeVectorsExact(t *testing.T) {
	units := UnitsOf([]string{"cpu", "mem", "gpu"})
	capacity := Vector{1, 1 << 30, 4}
	task := Vector{0.01, 0, 0}
	free := capacity.Clone()
	for i := range 100 {
		if !free.Fits(task) {
			t.Fatalf("task %d of 0.01 core does not fit a 1-core node", i+1)
		}
		AddUnits(free, task, units, -1)
	}
	if free[0] != 0 || free.Fits(task) {
		t.Fatalf("after 100 tasks of 0.01 core, free is %v and another fits: %v", free[0], free.Fits(task))
	}

	rng := rand.New(rand.NewPCG(1, 2))
	free, plain := Vector{128, 512 << 30, 8}, Vector{128, 512 << 30, 8}
	capacity = free.Clone()
	var held []Vector
	drifted := false
	for range 20000 {
		if len(held) > 0 && (rng.IntN(2) == 0 || len(held) > 50) {
			i := rng.IntN(len(held))
			AddUnits(free, held[i], units, +1)
			plain.Add(held[i])
			held = append(held[:i], held[i+1:]...)
		} else {
			d := Vector{float64(1+rng.IntN(300)) / 100, float64(rng.IntN(4096)) * (1 << 20), float64(rng.IntN(2))}
			if !free.Fits(d) {
				continue
			}
			AddUnits(free, d, units, -1)
			plain.Sub(d)
			held = append(held, d)
		}
		for k, x := range free {
			if x != units[k].of(math.Round(units[k].count(x))) {
				t.Fatalf("free %v is not a whole number of units", free)
			}
		}
		drifted = drifted || plain[0] != free[0]
	}
	for _, d := range held {
		AddUnits(free, d, units, +1)
		plain.Add(d)
	}
	for k := range free {
		if free[k] != capacity[k] {
			t.Fatalf("after every task ended, free is %v, want the capacity %v", free, capacity)
		}
	}
	// A demand stored before units (0.015 core) moves its rounded-up 0.02
	// both ways: nothing drifts.
	free = Vector{4, 0, 0}
	for range 1000 {
		AddUnits(free, Vector{0.015, 0, 0}, units, -1)
		if free[0] != 3.98 {
			t.Fatalf("taking 0.015 core from 4 left %v, want 3.98", free[0])
		}
		AddUnits(free, Vector{0.015, 0, 0}, units, +1)
	}
	if free[0] != 4 {
		t.Fatalf("after taking and giving back 0.015 core a thousand times, %v is free, want 4", free[0])
	}
	t.Logf("plain float sums drifted: %v (to %v)", drifted || plain[0] != capacity[0], plain[0])
}

// BenchmarkAddUnits is a task's demand taken from and given back to a
// free vector in whole units; BenchmarkAddFloat the plain float version
// the FSM used before.
func BenchmarkAddUnits(b *testing.B) {
	units := UnitsOf([]string{"cpu", "mem", "mic", "gpu"})
	free := Vector{64, 256 << 30, 2, 4}
	d := Vector{0.25, 2 << 30, 0, 1}
	for range b.N {
		AddUnits(free, d, units, -1)
		AddUnits(free, d, units, +1)
	}
}

func BenchmarkAddFloat(b *testing.B) {
	free := Vector{64, 256 << 30, 2, 4}
	d := Vector{0.25, 2 << 30, 0, 1}
	for range b.N {
		free.Sub(d)
		free.Add(d)
	}
}
