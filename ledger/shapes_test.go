package ledger

import (
	"slices"
	"testing"
)

// Shapes keeps exactly the capacities no other covers, once each, and
// words them for messages.
func TestShapesKeepTheLargestAndWordThem(t *testing.T) {
	names := []string{"cpu", "mem", "mic"}
	const gib = 1 << 30
	var s Shapes
	for _, c := range []Vector{
		{4, 8 * gib, 0}, {4, 8 * gib, 0}, // twins: one shape
		{32, 128 * gib, 0}, // covers the first
		{8, 96 * gib, 4},   // covers none, covered by none
		{8, 64 * gib, 2},   // covered by the last
	} {
		s = s.Add(c)
	}
	want := Shapes{{32, 128 * gib, 0}, {8, 96 * gib, 4}}
	if !slices.EqualFunc(s, want, slices.Equal) {
		t.Fatalf("shapes %v, want %v", s, want)
	}
	if got := s.Describe(names); got != "cpu=32 mem=128G, or cpu=8 mem=96G mic=4" {
		t.Errorf("Describe = %q", got)
	}
	for _, c := range []struct {
		demand Vector
		holds  bool
		lacks  string
	}{
		{Vector{32, 1, 0}, true, ""},
		{Vector{8, 1, 4}, true, ""},
		{Vector{33, 1, 0}, false, "cpu=33"},
		{Vector{16, 1, 1}, false, "cpu=16 mem=1 mic=1 on one node"},
		{Vector{64, 256 * gib, 100}, false, "cpu=64 and mem=256G and mic=100"},
	} {
		if got := s.Holds(c.demand); got != c.holds {
			t.Errorf("Holds(%v) = %v, want %v", c.demand, got, c.holds)
		}
		if !c.holds {
			if got := s.Lacking(names, c.demand); got != c.lacks {
				t.Errorf("Lacking(%v) = %q, want %q", c.demand, got, c.lacks)
			}
		}
	}
	if s.Holds(Vector{1, 0, 0, 1}) || !s.Holds(Vector{1, 0, 0, 0}) {
		t.Errorf("a resource no shape has an entry for must count as 0")
	}
	if got := s.Lacking(names, Vector{1, 0, 3}); got != "cpu=1 mic=3 on one node" {
		t.Errorf("Lacking within every maximum = %q", got)
	}
	var none Shapes
	if none.Holds(Vector{0, 0, 0}) || none.Describe(names) != "none" {
		t.Errorf("no shapes hold %v and are described %q", none.Holds(Vector{0, 0, 0}), none.Describe(names))
	}
	if got := none.Lacking(names, Vector{0, 0, 1}); got != "mic=1 (none has any mic)" {
		t.Errorf("Lacking with no shapes = %q", got)
	}
}

// BenchmarkShapesPass is what a scheduling pass adds for the shapes at the
// engine benchmark's scale: 10,000 nodes of two classes taken in, then the
// demands of 10,000 jobs checked.
func BenchmarkShapesPass(b *testing.B) {
	caps := make([]Vector, 10000)
	for i := range caps {
		caps[i] = Vector{32, 128, 0}
		if i%10 == 0 {
			caps[i] = Vector{64, 96, 4}
		}
	}
	demands := make([]Vector, 10000)
	for i := range demands {
		demands[i] = Vector{float64(1 + i%4), float64(1 + i%16), float64(i % 50 / 49)}
	}
	var s Shapes
	for b.Loop() {
		s = s[:0]
		for _, c := range caps {
			s = s.Add(c)
		}
		for _, d := range demands {
			if !s.Holds(d) {
				b.Fatal("a demand the nodes hold is not held")
			}
		}
	}
}
