package ledger

import (
	"fmt"
	"math"
)

// Vector is a resource vector: one quantity per resource type, indexed by the
// position of the resource's name in the cluster's resource list (for example
// cpu, mem, mic). A dense slice keeps the scheduler's hot path free of map
// look-ups.
type Vector []float64

// NewVector returns a zero vector of n resources.
func NewVector(n int) Vector { return make(Vector, n) }

// Clone returns a copy of v.
func (v Vector) Clone() Vector {
	if v == nil {
		return nil
	}
	return append(Vector(nil), v...)
}

// Add adds w to v in place.
func (v Vector) Add(w Vector) {
	for j := range v {
		v[j] += w[j]
	}
}

// Sub subtracts w from v in place.
func (v Vector) Sub(w Vector) {
	for j := range v {
		v[j] -= w[j]
	}
}

// AddScaled adds k·w to v in place.
func (v Vector) AddScaled(w Vector, k float64) {
	for j := range v {
		v[j] += w[j] * k
	}
}

// Scale multiplies v by k in place.
func (v Vector) Scale(k float64) {
	for j := range v {
		v[j] *= k
	}
}

// Fits reports whether demand ≤ v in every resource. A tiny tolerance absorbs
// floating-point residue left by adding and subtracting the same demands.
func (v Vector) Fits(demand Vector) bool {
	for j, d := range demand {
		if d > v[j]+fitEpsilon {
			return false
		}
	}
	return true
}

const fitEpsilon = 1e-9

// IsZero reports whether every component is zero.
func (v Vector) IsZero() bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Sum returns the sum of the components.
func (v Vector) Sum() float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// Validate checks that v has n finite, non-negative components.
func (v Vector) Validate(n int) error {
	if len(v) != n {
		return fmt.Errorf("resource vector has %d entries, want %d", len(v), n)
	}
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("resource %d is %v: quantities must be finite and non-negative", j, x)
		}
	}
	return nil
}
