package sched

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// rankKey orders accounts within a pass; smaller keys go first. Comparison is
// lexicographic over (class, a, b, c, account index), so a full tie goes to
// the account listed first in the view.
type rankKey struct {
	class   int
	a, b, c float64
	account int
}

// Rank classes. Starving accounts (past the time-out) go before everyone;
// H-MRF puts accounts under sharing loss (β < 1) before the rest.
const (
	classStarving = iota
	classSharingLoss
	classNormal
)

func (k rankKey) less(o rankKey) bool {
	if k.class != o.class {
		return k.class < o.class
	}
	if k.a != o.a {
		return k.a < o.a
	}
	if k.b != o.b {
		return k.b < o.b
	}
	if k.c != o.c {
		return k.c < o.c
	}
	return k.account < o.account
}

// fairness is one account's fairness state during a pass, projected to the
// end of the quantum.
type fairness struct {
	running  ledger.Vector // U_i with this pass's placements
	usage    ledger.Vector // Ü_i at the end of the quantum
	baseline ledger.Vector // ∫baseline at the end of the quantum
	weight   float64       // normalized weight w_i/Σw, never zero
}

// key computes account's rank under the policy. capacity is R. The account
// index is part of the key so that a full tie goes to the account listed
// first.
func (p Policy) key(account int, f *fairness, capacity ledger.Vector, ltrfResource int) rankKey {
	k := p.policyKey(f, capacity, ltrfResource)
	k.account = account
	return k
}

// policyKey is the policy's own ordering, before the tie-break.
func (p Policy) policyKey(f *fairness, capacity ledger.Vector, ltrfResource int) rankKey {
	switch p {
	case DRF, Static, Fawkes, QKnobler: // qknobler with ρ = 1 is drf; below 1 its pass re-ranks
		return rankKey{class: classNormal, a: dominantShare(f.running, capacity, f.weight)}
	case AF:
		return rankKey{class: classNormal, a: aggregateShare(f.running, capacity, f.weight)}
	case LTDRF:
		return rankKey{class: classNormal, a: dominantShare(f.usage, capacity, f.weight)}
	case LTAF:
		return rankKey{class: classNormal, a: aggregateShare(f.usage, capacity, f.weight)}
	case LTRF:
		return rankKey{class: classNormal, a: share(f.usage, capacity, f.weight, ltrfResource)}
	case HMRF:
		// Algorithm 1: while anyone is under sharing loss, the smallest β goes
		// first (step 1); otherwise the smallest weighted aggregate accumulated
		// share (step 2, AF), then the smallest weighted accumulated dominant
		// share (step 3, DRF).
		agg := aggregateShare(f.usage, capacity, f.weight)
		dom := dominantShare(f.usage, capacity, f.weight)
		if beta := ledger.Beta(f.usage, f.baseline); beta < 1 {
			return rankKey{class: classSharingLoss, a: beta, b: agg, c: dom}
		}
		return rankKey{class: classNormal, a: agg, b: dom}
	}
	return rankKey{class: classNormal}
}

// dominantShare is max_j v_j/(R_j·w).
func dominantShare(v, capacity ledger.Vector, w float64) float64 {
	s := 0.0
	for j := range v {
		s = math.Max(s, share(v, capacity, w, j))
	}
	return s
}

// aggregateShare is Σ_j v_j/(R_j·w).
func aggregateShare(v, capacity ledger.Vector, w float64) float64 {
	s := 0.0
	for j := range v {
		s += share(v, capacity, w, j)
	}
	return s
}

// share is v_j/(R_j·w); a resource the cluster has none of counts for nothing.
func share(v, capacity ledger.Vector, w float64, j int) float64 {
	if capacity[j] <= 0 {
		return 0
	}
	return v[j] / (capacity[j] * w)
}
