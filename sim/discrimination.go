package sim

import (
	"strconv"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/fawkes"
)

// noteWork tells the discrimination that account a's work may have started
// or run out.
func (r *replay) noteWork(a int) {
	r.weighting.disc.setActive(a, r.activeAccount(a), r.now)
}

// activeAccount reports whether account a has work: tasks pending or
// running.
func (r *replay) activeAccount(a int) bool {
	return r.accts[a].pending > 0 || r.accts[a].runningTasks > 0
}

// discTracker computes FAWKES's discrimination (§4.1) of every account,
// D_i = ∫(c_i(t) − w_i(t)) dt over the time it has work: c_i the fraction of
// the cluster it holds, w_i the fraction it is due. It integrates w_i cheaply:
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

// result closes the books at end and computes every account's D_i from its
// resource-seconds (∫c_i dt is the account's usage over the capacity), and
// Var(D) over the accounts that ever had work.
func (d *discTracker) result(end ledger.Time, usage []ledger.Vector, capacity ledger.Vector) ([]float64, float64) {
	d.advance(end)
	if d.fawkes {
		d.integrateShares(end)
	}
	out := make([]float64, len(d.weights))
	var ds []float64
	for a := range d.weights {
		if d.active[a] {
			d.close(a)
		}
		out[a] = fawkes.Held(usage[a], capacity) - d.owed[a]
		if d.ever[a] {
			ds = append(ds, out[a])
		}
	}
	return out, fawkes.Variance(ds)
}

// formatDiscrimination writes D_i in share·hours, readable at a glance.
func formatDiscrimination(d float64) string {
	return strconv.FormatFloat(d/3600, 'f', 3, 64)
}

// formatVariance writes Var(D) with three significant digits.
func formatVariance(v float64) string {
	return strconv.FormatFloat(v, 'g', 3, 64)
}
