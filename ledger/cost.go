package ledger

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
)

// BillingWeights are TRES-style billing weights: the SU one unit of each
// resource costs per hour of runtime. They are indexed like a Vector, by the
// position of the resource in the cluster's resource list (weight 0 for cpu
// is BillingWeights[0] when the list starts with cpu), because demands are
// Vectors and the cost is computed on the hot path of every task exit. Use
// ParseBillingWeights and Format to convert from and to the named form
// admins write ("cpu=1,mem=0.25/GiB,mic=10"). A resource with no weight
// costs nothing.
type BillingWeights []float64

// Clone returns a copy of w.
func (w BillingWeights) Clone() BillingWeights {
	if w == nil {
		return nil
	}
	return append(BillingWeights(nil), w...)
}

// Validate checks that w has one finite, non-negative weight for each of n
// resources.
func (w BillingWeights) Validate(n int) error {
	if len(w) != n {
		return fmt.Errorf("billing weights have %d entries but the cluster has %d resources: give one weight per resource (0 for free ones)", len(w), n)
	}
	for k, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("billing weight %d is %v: weights must be finite and non-negative", k, x)
		}
	}
	return nil
}

// BillingRule says how the weighted resources of a demand make its rate:
// their sum, or their largest (Slurm's PriorityFlags=MAX_TRES). The zero
// value is BillingSum, the rule of every charge made before rules existed.
type BillingRule uint8

// The billing rules.
const (
	// BillingSum: rate = Σ_k w_k × demand_k, every resource paid for.
	BillingSum BillingRule = 0
	// BillingMax: rate = max_k w_k × demand_k. With weights that price one
	// node's worth of each resource alike, a task pays for the largest
	// share of a node it takes, whichever resource that is: memory or a
	// device alone costs what it keeps others from using.
	BillingMax BillingRule = 1
)

// String is the rule's name as ParseBillingRule reads it.
func (r BillingRule) String() string {
	switch r {
	case BillingSum:
		return "sum"
	case BillingMax:
		return "max"
	}
	return fmt.Sprintf("billing-rule-%d", uint8(r))
}

// ParseBillingRule reads "sum" or "max".
func ParseBillingRule(s string) (BillingRule, error) {
	switch s {
	case "sum":
		return BillingSum, nil
	case "max":
		return BillingMax, nil
	}
	return 0, fmt.Errorf("billing rule %q is unknown: use max (a task pays for its largest weighted resource, as Slurm's MAX_TRES) or sum (it pays for all of them)", s)
}

// Valid reports whether r is one of the rules.
func (r BillingRule) Valid() bool { return r == BillingSum || r == BillingMax }

// MarshalText writes the rule's name, so records and JSON details read
// "max" rather than a number.
func (r BillingRule) MarshalText() ([]byte, error) {
	if !r.Valid() {
		return nil, fmt.Errorf("billing rule %d is unknown", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads what MarshalText writes.
func (r *BillingRule) UnmarshalText(b []byte) error {
	v, err := ParseBillingRule(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ErrCost is wrapped by every error of Cost and WorstCaseHold.
var ErrCost = errors.New("cannot compute SU cost")

// Cost is what a task that held demand for runtime costs under rule:
//
//	cost = runtime_hours × Σ_k w_k × demand_k     (BillingSum)
//	cost = runtime_hours × max_k w_k × demand_k   (BillingMax)
//
// It is the one pricing rule of the cluster: WorstCaseHold (the hold at
// submission) and the charge at a task's end both call it, so a hold made
// under the same settings always covers the charges. The cost is computed
// exactly (every float64 is a rational number, and the arithmetic is done
// on those rationals with math/big) and then rounded half up to the
// micro-SU, so the result does not depend on the order of floating
// point operations or on fused multiply-add: every replica on every CPU
// architecture computes the same SU. Cost is monotone in runtime, so a task
// that ends before its walltime never costs more than WorstCaseHold reserved
// for it.
//
// An error is returned, wrapping ErrCost, when runtime is negative, when the
// demand or the weights are not finite and non-negative or have different
// lengths, or when the cost does not fit in an SU.
func Cost(runtime time.Duration, demand Vector, w BillingWeights, rule BillingRule) (SU, error) {
	if !rule.Valid() {
		return 0, fmt.Errorf("%w: billing rule %d is unknown; use sum or max", ErrCost, uint8(rule))
	}
	if runtime < 0 {
		return 0, fmt.Errorf("%w: runtime %v is negative; pass the time the task held its resources", ErrCost, runtime)
	}
	if err := demand.Validate(len(w)); err != nil {
		return 0, fmt.Errorf("%w: demand: %w", ErrCost, err)
	}
	if err := w.Validate(len(demand)); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCost, err)
	}
	if micro, ok := costFast(runtime, demand, w, rule); ok {
		return micro, nil
	}
	micro, ok := costExact(runtime, demand, w, rule)
	if !ok {
		return 0, fmt.Errorf("%w: %v of this demand costs more than %v SU; check the demand, the runtime and the billing weights", ErrCost, runtime, MaxSU)
	}
	return micro, nil
}

// costExact computes the cost on exact rationals and rounds half up; it
// reports false when the result does not fit in an SU.
func costExact(runtime time.Duration, demand Vector, w BillingWeights, rule BillingRule) (SU, bool) {
	rate := new(big.Rat)
	var term, x big.Rat
	for k, d := range demand {
		if d == 0 || w[k] == 0 {
			continue
		}
		term.SetFloat64(d)
		x.SetFloat64(w[k])
		term.Mul(&term, &x)
		if rule == BillingMax {
			if term.Cmp(rate) > 0 {
				rate.Set(&term)
			}
			continue
		}
		rate.Add(rate, &term)
	}
	// micro-SU = runtime_ns × rate × 10^6 / (3600 × 10^9) = runtime_ns × rate / 3.6e6
	total := rate.Mul(rate, x.SetInt64(int64(runtime)))
	total.Quo(total, x.SetInt64(3_600_000))
	return roundHalfUp(total)
}

// costFast computes the cost in float64 with a rigorous bound on its
// rounding error, and answers only when the whole error interval rounds to
// the same micro-SU, which is then the exact answer costExact would give.
// Otherwise (about one call in a few thousand for everyday amounts, and
// always for amounts beyond 2^40 micro-SU) it reports false and the caller
// falls back to the exact computation. Because the answer is always the
// exactly rounded one, fused multiply-add or any other legal difference in
// float evaluation can only change which path answers, never the answer.
func costFast(runtime time.Duration, demand Vector, w BillingWeights, rule BillingRule) (SU, bool) {
	var rate float64
	for k, d := range demand {
		if rule == BillingMax {
			// The largest rounded product is within the products' own
			// rounding of the largest exact one: the bound below holds.
			rate = max(rate, float64(d*w[k]))
			continue
		}
		rate += float64(d * w[k])
	}
	x := float64(float64(runtime)*rate) / 3_600_000
	if !(x < 1<<40) { // also catches NaN and Inf
		return 0, false
	}
	// Each of the len(demand)+3 roundings (products, sums, the runtime's
	// conversion, the product and the quotient) is off by at most 2^-53
	// relative; the bound below is several times that, plus an absolute
	// term for products that underflow.
	n := float64(len(demand) + 8)
	bound := x*n*0x1p-50 + 0x1p-900
	y := x + 0.5
	k := math.Floor(y)
	if y-k <= 4*bound || (k+1)-y <= 4*bound {
		return 0, false
	}
	return SU(k), true
}

// WorstCaseHold is the hold a job of tasks identical tasks with this demand
// and walltime needs at submission: tasks × Cost(walltime, demand, w,
// rule). Each task is rounded on its own, exactly as its charge will be, so
// the charges of tasks that run at most their walltime always fit in the
// hold.
func WorstCaseHold(tasks int, walltime time.Duration, demand Vector, w BillingWeights, rule BillingRule) (SU, error) {
	if tasks < 0 {
		return 0, fmt.Errorf("%w: task count %d is negative", ErrCost, tasks)
	}
	per, err := Cost(walltime, demand, w, rule)
	if err != nil {
		return 0, err
	}
	if per != 0 && SU(tasks) > MaxSU/per {
		return 0, fmt.Errorf("%w: %d tasks of %v SU each cost more than %v SU; submit fewer tasks or a shorter walltime", ErrCost, tasks, per, MaxSU)
	}
	return SU(tasks) * per, nil
}

// roundHalfUp rounds a non-negative rational to the nearest integer, halves
// going up, and reports whether it fits in an SU.
func roundHalfUp(r *big.Rat) (SU, bool) {
	// floor(r + 1/2) = (2·num + den) div (2·den) for den > 0.
	num := new(big.Int).Lsh(r.Num(), 1)
	num.Add(num, r.Denom())
	den := new(big.Int).Lsh(r.Denom(), 1)
	q := num.Div(num, den)
	if !q.IsInt64() {
		return 0, false
	}
	return SU(q.Int64()), true
}
