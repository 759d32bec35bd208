package pbescape

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// upper stands in for an escaping function: it changes what it is given,
// so a value the helpers leave alone shows.
func upper(s string) string { return strings.ToUpper(s) }

func TestStringsEscapesEveryElement(t *testing.T) {
	s := []string{"a", "B", "c"}
	Strings(s, upper)
	if want := []string{"A", "B", "C"}; !slices.Equal(s, want) {
		t.Fatalf("Strings = %q, want %q", s, want)
	}
	Strings(nil, upper) // no panic on an unset list
}

func TestKeysEscapesKeysAndKeepsValues(t *testing.T) {
	m := map[string]float64{"cpu": 2, "MEM": 4, "gpu": 1}
	Keys(m, upper)
	if want := map[string]float64{"CPU": 2, "MEM": 4, "GPU": 1}; !maps.Equal(m, want) {
		t.Fatalf("Keys = %v, want %v", m, want)
	}
	// An escaped key that is already a key replaces its entry.
	m = map[string]float64{"a": 1, "A": 2}
	Keys(m, upper)
	if len(m) != 1 || m["A"] != 1 {
		t.Fatalf("Keys with a collision = %v, want map[A:1]", m)
	}
	Keys[int](nil, upper)
}

func TestValuesEscapesEveryValue(t *testing.T) {
	m := map[string]string{"n1": "addr", "n2": "X"}
	Values(m, upper)
	if want := map[string]string{"n1": "ADDR", "n2": "X"}; !maps.Equal(m, want) {
		t.Fatalf("Values = %v, want %v", m, want)
	}
}
