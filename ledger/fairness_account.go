package ledger

import (
	"math"
	"time"
)

// accountBook is one account's page of the fairness book.
type accountBook struct {
	// last is the time of the account's last event; the integrals below are
	// as of last, and earlier times are clamped to it.
	last Time
	// usage and baseline are Ü and ∫baseline at last, for the windows that
	// integrate incrementally (none, tumbling, decay). The sliding window
	// derives them from startSum, ended and segments instead.
	usage, baseline Vector
	rate            Vector // U_i: summed demand of running tasks
	baselineRate    Vector
	running         int // tasks started and not yet ended
	lastAllocation  Time
	allocated       bool

	// Sliding window only.
	startSum Vector       // Σ d·start over running tasks, start in seconds since the book's origin
	ended    endedQueue   // usage of ended tasks, by end time
	segments segmentQueue // baseline rate history, by start time
}

func newAccountBook(resources int, at Time) *accountBook {
	buf := make(Vector, 5*resources)
	r := resources
	return &accountBook{
		last:         at,
		usage:        buf[0*r : 1*r : 1*r],
		baseline:     buf[1*r : 2*r : 2*r],
		rate:         buf[2*r : 3*r : 3*r],
		baselineRate: buf[3*r : 4*r : 4*r],
		startSum:     buf[4*r : 5*r : 5*r],
		ended:        endedQueue{width: r},
		segments:     segmentQueue{width: r},
	}
}

// clamp turns a time before the account's last event into that event's time.
func (a *accountBook) clamp(t Time) Time { return max(t, a.last) }

// integrate advances v, an integral of the constant rate under the book's
// window, from time from to time to ≥ from, in place. The sliding window
// does not come here: it is not a function of the integral's last value.
func (b *FairnessBook) integrate(v, rate Vector, from, to Time) {
	if to <= from {
		return
	}
	dt := spanSeconds(to - from)
	switch b.window.Kind {
	case WindowTumbling:
		boundary := tumblingStart(to, b.window.Length)
		if boundary > from {
			// A boundary was crossed: what came before it is forgotten and
			// only the part of the interval after it counts.
			since := spanSeconds(to - boundary)
			for j, r := range rate {
				v[j] = r * since
			}
			return
		}
		v.AddScaled(rate, dt)
	case WindowDecay:
		// Exact solution of dÜ/dt = U − Ü·ln2/H over the interval.
		h := b.window.Length.Seconds()
		x := dt * math.Ln2 / h
		keep := math.Exp(-x)
		gain := -math.Expm1(-x) * h / math.Ln2
		for j, r := range rate {
			v[j] = v[j]*keep + r*gain
		}
	default:
		v.AddScaled(rate, dt)
	}
}

// tumblingStart is the start kL of the epoch-aligned window of length l
// that holds t.
func tumblingStart(t Time, l time.Duration) Time {
	n := Time(l)
	k := t / n
	if t%n != 0 && t < 0 {
		k-- // round towards −∞, not towards zero
	}
	return k * n
}

// windowStart is t−l, the oldest time a sliding window ending at t covers,
// saturating instead of wrapping around.
func windowStart(t Time, l time.Duration) Time {
	if t < math.MinInt64+Time(l) {
		return math.MinInt64
	}
	return t - Time(l)
}
