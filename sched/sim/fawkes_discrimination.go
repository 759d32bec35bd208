package sim

import (
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/fawkes"
)

// Discrimination is FAWKES's fairness measure (§4.1) for one replay: each
// account's overall discrimination D_i = ∫(c_i(t) − w_i(t)) dt over the
// time it had work, where c_i is the fraction of the cluster it held (the
// mean over resources of its share of each) and w_i the fraction it was
// entitled to: its weight over the weights of the accounts with work at
// the time — or, under fawkes, the share FAWKES gave it. Positive D_i: the
// account got more than its due, negative: less. Variance is Var(D), the
// global discrimination factor, over the accounts that ever had work; the
// smaller, the more balanced.
type Discrimination struct {
	// D is D_i per account, in share·seconds.
	D []float64
	// Variance is Var(D) = E[D²] − E[D]², in (share·s)².
	Variance float64
}

// discTracker integrates the entitlement w_i(t) of every account cheaply:
// the entitled share of an active account is w_i/W(t) (W the active
// weights' sum), so ∫w_i dt = w_i·∫dt/W over its active time, and one
// running integral G = ∫dt/W serves every account. When every active
// account weighs nothing they share equally, which H = ∫dt/n integrates.
// Under fawkes the entitlement is the account's share, integrated whenever
// shares change. ∫c_i dt needs no tracking: it is the account's
// resource-seconds over the capacity.
type discTracker struct {
	weights  []float64
	fawkes   bool
	last     ledger.Time
	w        float64 // Σ weights of the active accounts
	n        int     // active accounts
	g, h     float64
	active   []bool
	ever     []bool
	gAt, hAt []float64
	owed     []float64   // ∫w_i dt so far, share·seconds
	share    []float64   // fawkes: current shares
	shareAt  ledger.Time // fawkes: when the shares were last integrated
}

func newDiscTracker(weights []float64, fawkes bool) *discTracker {
	n := len(weights)
	return &discTracker{
		weights: weights, fawkes: fawkes, active: make([]bool, n), ever: make([]bool, n),
		gAt: make([]float64, n), hAt: make([]float64, n), owed: make([]float64, n), share: make([]float64, n),
	}
}

func (d *discTracker) advance(t ledger.Time) {
	dt := t.Sub(d.last).Seconds()
	if dt > 0 && d.n > 0 {
		if d.w > 0 {
			d.g += dt / d.w
		} else {
			d.h += dt / float64(d.n)
		}
	}
	d.last = t
}

// setActive records that account a gained or lost its work at t.
func (d *discTracker) setActive(a int, on bool, t ledger.Time) {
	if d.active[a] == on {
		return
	}
	if d.fawkes {
		d.integrateShares(t)
	}
	d.advance(t)
	d.active[a] = on
	if on {
		d.ever[a] = true
		d.gAt[a], d.hAt[a] = d.g, d.h
		d.w += d.weights[a]
		d.n++
		return
	}
	d.close(a)
	d.w -= d.weights[a]
	d.n--
	if d.n == 0 || d.w < 1e-12 {
		d.w = 0 // no drift: nobody active, or only accounts without weight
		for i, on := range d.active {
			if on {
				d.w += d.weights[i]
			}
		}
	}
}

// close adds an active account's entitlement since it became active.
func (d *discTracker) close(a int) {
	if d.fawkes {
		return
	}
	d.owed[a] += d.weights[a]*(d.g-d.gAt[a]) + (d.h - d.hAt[a])
	d.gAt[a], d.hAt[a] = d.g, d.h
}

// setShares records new fawkes shares from t on.
func (d *discTracker) setShares(shares []float64, t ledger.Time) {
	d.integrateShares(t)
	copy(d.share, shares)
}

// integrateShares adds the fawkes shares of the active accounts since they
// were last integrated.
func (d *discTracker) integrateShares(t ledger.Time) {
	if dt := t.Sub(d.shareAt).Seconds(); dt > 0 {
		for i, on := range d.active {
			if on {
				d.owed[i] += d.share[i] * dt
			}
		}
	}
	d.shareAt = t
}

// result closes the books at end and computes D_i from each account's
// resource-seconds.
func (d *discTracker) result(end ledger.Time, usage []ledger.Vector, capacity ledger.Vector) Discrimination {
	d.advance(end)
	if d.fawkes {
		d.integrateShares(end)
	}
	out := Discrimination{D: make([]float64, len(d.weights))}
	var ds []float64
	for a := range d.weights {
		if d.active[a] {
			d.close(a)
		}
		out.D[a] = fawkes.Held(usage[a], capacity) - d.owed[a]
		if d.ever[a] {
			ds = append(ds, out.D[a])
		}
	}
	out.Variance = fawkes.Variance(ds)
	return out
}
