package sched

import (
	"fmt"
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

// Rank classes. An account whose next job an admin boosted goes first;
// starving accounts (past the time-out) go next, before everyone else;
// H-MRF puts accounts under sharing loss (β < 1) before the rest.
const (
	// classBoosted: the account's next job has an admin's boost; a is
	// minus the boost, so the highest goes first.
	classBoosted = iota
	classStarving
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

// fillingPolicies are the policies that rank accounts by one key each and
// fill progressively (engine.go): the H-MRF paper's policies and their
// baselines. They cap nobody but static, which keeps every account inside
// its partition R·w_i/Σw.
func fillingPolicies() []policyRow {
	return []policyRow{
		{name: HMRF, key: hmrfKey, capFree: true, longTerm: true,
			rule: "accounts under sharing loss (β < 1) go first, lowest β first; then the lowest accumulated usage for their weight"},
		{name: LTDRF, key: ltdrfKey, capFree: true, longTerm: true,
			rule: "the account whose accumulated dominant share for its weight is smallest goes first"},
		{name: LTAF, key: ltafKey, capFree: true, longTerm: true,
			rule: "the account whose accumulated aggregate share for its weight is smallest goes first"},
		{name: DRF, key: drfKey, capFree: true,
			rule: "the account whose current dominant share for its weight is smallest goes first"},
		{name: AF, key: afKey, capFree: true,
			rule: "the account whose current aggregate share for its weight is smallest goes first"},
		{name: LTRF, key: ltrfKey, capFree: true, longTerm: true, settings: ltrfSettings,
			rule: "the account with the least accumulated usage of the fairness resource for its weight goes first"},
		{name: Static, key: drfKey, prepare: staticPartitions,
			rule: "each account runs only in its own partition of the cluster"},
	}
}

// drfKey: the smallest current dominant share for the weight first.
func drfKey(f *fairness, capacity ledger.Vector, _ *Settings) rankKey {
	return rankKey{class: classNormal, a: dominantShare(f.running, capacity, f.weight)}
}

// afKey: the smallest current aggregate share for the weight first.
func afKey(f *fairness, capacity ledger.Vector, _ *Settings) rankKey {
	return rankKey{class: classNormal, a: aggregateShare(f.running, capacity, f.weight)}
}

// ltdrfKey: the smallest accumulated dominant share first (paper §5.1).
func ltdrfKey(f *fairness, capacity ledger.Vector, _ *Settings) rankKey {
	return rankKey{class: classNormal, a: dominantShare(f.usage, capacity, f.weight)}
}

// ltafKey: the smallest accumulated aggregate share first (paper §5.2).
func ltafKey(f *fairness, capacity ledger.Vector, _ *Settings) rankKey {
	return rankKey{class: classNormal, a: aggregateShare(f.usage, capacity, f.weight)}
}

// ltrfKey: the least accumulated usage of the one fairness resource.
func ltrfKey(f *fairness, capacity ledger.Vector, s *Settings) rankKey {
	return rankKey{class: classNormal, a: share(f.usage, capacity, f.weight, s.LTRFResource)}
}

// hmrfKey is Algorithm 1: while anyone is under sharing loss, the smallest
// β goes first (step 1); otherwise the smallest weighted aggregate
// accumulated share (step 2, AF), then the smallest weighted accumulated
// dominant share (step 3, DRF).
func hmrfKey(f *fairness, capacity ledger.Vector, _ *Settings) rankKey {
	agg := aggregateShare(f.usage, capacity, f.weight)
	dom := dominantShare(f.usage, capacity, f.weight)
	if beta := ledger.Beta(f.usage, f.baseline); beta < 1 {
		return rankKey{class: classSharingLoss, a: beta, b: agg, c: dom}
	}
	return rankKey{class: classNormal, a: agg, b: dom}
}

// ltrfSettings checks ltrf's fairness resource, an index into the
// cluster's resources, when ltrf is in force.
func ltrfSettings(s *Settings, resources []string, active bool) error {
	if active && (s.LTRFResource < 0 || s.LTRFResource >= len(resources)) {
		return fmt.Errorf("ltrf resource index %d is out of range: the cluster has %d resources %v", s.LTRFResource, len(resources), resources)
	}
	return nil
}

// staticPartitions confines every account to its partition R·w_i/Σw for
// the pass (fit checks it); with no weight anywhere, the accounts split
// the cluster equally.
func staticPartitions(e *Engine, v *View) {
	total := totalWeight(v.Accounts)
	e.share = resize(e.share, len(v.Accounts))
	for a := range v.Accounts {
		e.share[a] = ledger.Share(e.capacity, v.Accounts[a].Weight, total)
		if total == 0 {
			e.share[a] = ledger.Share(e.capacity, 1, float64(len(v.Accounts)))
		}
	}
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
