package ledger

import (
	"math"
	"slices"
)

// maxChargeResources bounds the resource vectors a charge detail may carry.
const maxChargeResources = 256

// IsZero reports whether d carries no detail at all (a charge posted by
// hand rather than computed from a task's runtime).
func (d ChargeDetail) IsZero() bool {
	return d.Runtime == 0 && len(d.Demand) == 0 && len(d.Weights) == 0 && len(d.Resources) == 0 && d.Rule == BillingSum
}

// checkChargeDetail checks that a detailed charge's amount follows from its
// detail, so that an auditor can trust and recompute every detailed entry.
func checkChargeDetail(chargeID string, amount SU, d ChargeDetail) error {
	if d.IsZero() {
		return nil
	}
	if len(d.Demand) > maxChargeResources {
		return badSUArgument("charge %q detail has %d resources: at most %d are supported", chargeID, len(d.Demand), maxChargeResources)
	}
	if len(d.Resources) != 0 && len(d.Resources) != len(d.Demand) {
		return badSUArgument("charge %q detail names %d resources for a demand of %d: name every resource of the demand, or none",
			chargeID, len(d.Resources), len(d.Demand))
	}
	for _, r := range d.Resources {
		if err := checkSUName("resource name", r); err != nil {
			return badSUArgument("charge %q detail: %v", chargeID, err)
		}
	}
	cost, err := Cost(d.Runtime, d.Demand, d.Weights, d.Rule)
	if err != nil {
		return badSUArgument("charge %q detail: %v", chargeID, err)
	}
	if cost != amount {
		return badSUArgument("charge %q of %v SU does not match its detail: %v of this demand at these billing weights (rule %v) costs %v SU; charge what ledger.Cost computes",
			chargeID, amount, d.Runtime, d.Rule, cost)
	}
	return nil
}

// sameChargeDetail compares details bit for bit, the way their journal
// encoding does.
func sameChargeDetail(a, b ChargeDetail) bool {
	sameBits := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	return a.Runtime == b.Runtime && a.Rule == b.Rule &&
		slices.EqualFunc(a.Demand, b.Demand, sameBits) &&
		slices.EqualFunc(a.Weights, b.Weights, sameBits) &&
		slices.Equal(a.Resources, b.Resources)
}
