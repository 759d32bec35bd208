package sched

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/longfair/longfair/ledger"
)

// waterFill computes DRF's allocation for divisible tasks and finite demands
// (QKnobler §6.1, C1): all accounts' weighted dominant shares rise together;
// an account whose whole demand is met stops there and the others go on with
// what is left, until some resource is full.
type waterFill struct {
	w            []float64 // weights, filled by Engine.weights
	dom          []float64 // dominant share of each account's whole demand
	level        []float64
	order        []int
	fixed, slope ledger.Vector
}

// levels returns, per account, the weighted dominant share s_i/w_i the
// account reaches: its whole demand's if that is met, else the common level
// at which the first resource fills up. An account without demand or weight
// gets 0. The result is reused by the next call.
func (f *waterFill) levels(capacity ledger.Vector, demand []ledger.Vector, w []float64) []float64 {
	f.dom, f.level = resize(f.dom, len(demand)), resize(f.level, len(demand))
	f.fixed, f.slope = resize(f.fixed, len(capacity)), resize(f.slope, len(capacity))
	clear(f.fixed)
	clear(f.slope)
	clear(f.level)
	f.order = f.order[:0]
	for i := range demand {
		f.dom[i] = dominantShare(demand[i], capacity, 1)
		if f.dom[i] <= 0 || w[i] <= 0 {
			continue
		}
		f.order = append(f.order, i)
		// Below its own limit an account holds (level·w/δ)·demand.
		f.slope.AddScaled(demand[i], w[i]/f.dom[i])
	}
	slices.SortFunc(f.order, func(a, b int) int {
		return cmp.Or(cmp.Compare(f.dom[a]/w[a], f.dom[b]/w[b]), cmp.Compare(a, b))
	})
	level, floor := math.Inf(1), 0.0
	for _, i := range f.order {
		own := f.dom[i] / w[i]
		if full := f.saturation(capacity); full <= own {
			level = math.Max(full, floor)
			break
		}
		// Account i is satisfied before any resource fills up.
		f.fixed.Add(demand[i])
		f.slope.AddScaled(demand[i], -w[i]/f.dom[i])
		floor = own
	}
	for _, i := range f.order {
		f.level[i] = math.Min(f.dom[i]/w[i], level)
	}
	return f.level
}

// saturation is the level at which the first resource fills up given the
// load fixed by satisfied accounts and the load per unit of level of the
// others; +Inf when none does.
func (f *waterFill) saturation(capacity ledger.Vector) float64 {
	level := math.Inf(1)
	for k, r := range capacity {
		if r > 0 && f.slope[k] > 0 {
			level = math.Min(level, (r-f.fixed[k])/f.slope[k])
		}
	}
	return level
}

// AccountShare is one account's side of a soft-fairness measurement.
type AccountShare struct {
	// Weight is the account's weight; any scale, zero means no entitlement.
	Weight float64
	// Held is what the account's running tasks hold.
	Held ledger.Vector
	// Waiting says whether the account has tasks that still wait to run.
	Waiting bool
}

// SoftFairness measures the θ of θ-soft fairness (QKnobler, Formula 12) of
// one allocation: the largest s_j/w_j − s_i/w_i over an account j that holds
// resources and an account i that still waits for more, s being the
// dominant share of what an account holds. An account that wants nothing
// more cannot be wronged, so it only counts on the holding side (the paper's
// C1 drops inactive users the same way). Weights are scaled to a mean of 1
// over the accounts that have one, so with equal weights θ compares plain
// dominant shares; accounts with zero weight are entitled to nothing and are
// left out. It is 0 when nobody waits.
func SoftFairness(capacity ledger.Vector, accounts []AccountShare) (float64, error) {
	sum, n := 0.0, 0
	for i, a := range accounts {
		if len(a.Held) != len(capacity) {
			return 0, fmt.Errorf("account %d holds %d resources, the cluster has %d", i, len(a.Held), len(capacity))
		}
		if !(a.Weight >= 0) || math.IsInf(a.Weight, 0) {
			return 0, fmt.Errorf("account %d has weight %v: weights must be finite and non-negative", i, a.Weight)
		}
		if a.Weight > 0 {
			sum += a.Weight
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	mean := sum / float64(n)
	most, least := math.Inf(-1), math.Inf(1)
	for _, a := range accounts {
		if a.Weight <= 0 {
			continue
		}
		s := dominantShare(a.Held, capacity, a.Weight/mean)
		most = math.Max(most, s)
		if a.Waiting {
			least = math.Min(least, s)
		}
	}
	if math.IsInf(least, 1) {
		return 0, nil
	}
	return math.Max(most-least, 0), nil
}

// QKnoblerThetaBound is Theorem 1 of the QKnobler paper: the θ of the θ-soft
// fairness that qknobler with knob rho guarantees to accounts with the given
// weights and per-task demands, in the paper's model (every account
// backlogged, tasks divisible, the cluster one machine of the given
// capacity). The fairness stage gives every account the same weighted share
// ρ/φ; θ bounds what the efficiency stage can add on top for any one account:
// max_i (max_k d_ik/r_k) / (w_i · max_k d_ik/r'_k) with r' what the fairness
// stage leaves idle. Weights are scaled as SoftFairness scales them (to a
// mean of 1 over the accounts that have one), so the two compare. It is 0 at
// ρ = 1. Accounts with no weight or no demand are left out.
func QKnoblerThetaBound(capacity ledger.Vector, weights []float64, demand []ledger.Vector, rho float64) (float64, error) {
	m, err := newDRFModel(capacity, weights, demand)
	if err != nil {
		return 0, err
	}
	if !(rho >= 0 && rho <= 1) {
		return 0, fmt.Errorf("knob ρ %v is out of range: give a value in [0, 1]", rho)
	}
	if rho == 1 || m.phi == 0 {
		return 0, nil
	}
	// r'_k = r_k − ρ·Σ_j N_j^max·d_jk, N_j^max·d_j = (w_j/φ)·d_j/δ_j.
	idle := capacity.Clone()
	for _, j := range m.accounts {
		idle.AddScaled(demand[j], -rho*m.w[j]/m.phi/m.dom[j])
	}
	theta := 0.0
	for _, i := range m.accounts {
		worst := 0.0 // max_k d_ik/r'_k
		for k, d := range demand[i] {
			if capacity[k] <= 0 || d <= 0 {
				continue
			}
			if idle[k] <= 1e-12*capacity[k] {
				worst = math.Inf(1)
				break
			}
			worst = math.Max(worst, d/idle[k])
		}
		if worst > 0 && !math.IsInf(worst, 1) {
			theta = math.Max(theta, m.dom[i]/(m.w[i]*worst))
		}
	}
	return theta, nil
}

// QKnoblerSharingIncentive is Theorem 2 of the QKnobler paper: the smallest
// knob ρ at which qknobler is sharing incentive for accounts with the given
// weights and per-task demands (each runs at least as many tasks as in its
// own partition R·w_i/Σw), in the paper's model. It is φ/Σw, at most 1.
func QKnoblerSharingIncentive(capacity ledger.Vector, weights []float64, demand []ledger.Vector) (float64, error) {
	m, err := newDRFModel(capacity, weights, demand)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, j := range m.accounts {
		total += m.w[j]
	}
	if total == 0 {
		return 0, nil
	}
	return m.phi / total, nil
}

// drfModel is DRF in the QKnobler paper's model (§5.1): backlogged accounts,
// divisible tasks, one machine. Under DRF every account gets the dominant
// share s_j^max = w_j/φ.
type drfModel struct {
	w, dom   []float64 // weights scaled to mean 1, dominant share of one task
	accounts []int     // those with weight and demand
	phi      float64   // φ = max_k (1/r_k)·Σ_j w_j·d_jk/δ_j
}

func newDRFModel(capacity ledger.Vector, weights []float64, demand []ledger.Vector) (*drfModel, error) {
	if err := capacity.Validate(len(capacity)); err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	if len(weights) != len(demand) {
		return nil, fmt.Errorf("%d weights for %d demands: give one weight per account", len(weights), len(demand))
	}
	m := &drfModel{w: make([]float64, len(weights)), dom: make([]float64, len(weights))}
	sum, n := 0.0, 0
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("account %d has weight %v: weights must be finite and non-negative", i, w)
		}
		if err := demand[i].Validate(len(capacity)); err != nil {
			return nil, fmt.Errorf("account %d demand: %w", i, err)
		}
		m.dom[i] = dominantShare(demand[i], capacity, 1)
		if w > 0 {
			sum += w
			n++
			if m.dom[i] > 0 {
				m.accounts = append(m.accounts, i)
			}
		}
	}
	if len(m.accounts) == 0 {
		return m, nil
	}
	for _, i := range m.accounts {
		m.w[i] = weights[i] * float64(n) / sum
	}
	for k, r := range capacity {
		if r <= 0 {
			continue
		}
		load := 0.0
		for _, j := range m.accounts {
			load += m.w[j] * demand[j][k] / m.dom[j]
		}
		m.phi = math.Max(m.phi, load/r)
	}
	return m, nil
}
