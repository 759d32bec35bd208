package ledger

import (
	"fmt"
	"slices"
	"sort"
)

// FairnessBook keeps, per account and under one window, the accumulated usage
// Ü_i = ∫U_i dt, the integral of the non-sharing baseline rate, the current
// allocation U_i and the time of the last allocation. Rates are piecewise
// constant between events, so every event integrates exactly and costs O(1)
// amortized; accounts that see no event cost nothing.
//
// Every method takes the time as an argument. A time earlier than the
// account's last event is treated as that last event: the book never
// integrates a negative interval and never refuses an event for its time.
//
// Demand and rate vectors must have Resources entries, finite and
// non-negative. That is the caller's contract (the FSM validates jobs when
// they are submitted); an event with an invalid vector is ignored rather than
// allowed to corrupt the book or panic.
//
// A FairnessBook is not safe for concurrent use.
type FairnessBook struct {
	window    Window
	resources int
	// origin is the zero of the relative seconds the sliding window sums
	// Σd·start in; anchoring them at the book's first event keeps
	// now·Σd − Σd·start from cancelling away the digits that matter.
	origin    Time
	hasOrigin bool
	accounts  map[string]*accountBook
	names     []string // sorted
}

// AccountFairness is one account's fairness state at a point in time. The
// vectors are copies the caller may keep and modify.
type AccountFairness struct {
	// Usage is Ü_i under the window, in resource-seconds.
	Usage Vector
	// Baseline is the integral of the non-sharing baseline rate under the
	// window, in resource-seconds.
	Baseline Vector
	// Rate is U_i, the summed demand of the account's running tasks.
	Rate Vector
	// BaselineRate is the baseline rate last given by SetBaselineRate.
	BaselineRate Vector
	// LastAllocation is the time of the account's last TaskStarted; it is
	// meaningful only when Allocated is true.
	LastAllocation Time
	// Allocated reports whether the account ever had a task started.
	Allocated bool
}

// NewFairnessBook returns an empty book for vectors of the given number of
// resources. The zero Window means none. The window must be valid
// (Window.Validate; ParseWindow only returns valid ones) and resources
// non-negative: both come from code, not from users, so NewFairnessBook
// panics on them like time.NewTicker does on a non-positive period.
func NewFairnessBook(w Window, resources int) *FairnessBook {
	if w.Kind == "" {
		w.Kind = WindowNone
	}
	if err := w.Validate(); err != nil {
		panic(fmt.Sprintf("ledger.NewFairnessBook: %v", err))
	}
	if resources < 0 {
		panic(fmt.Sprintf("ledger.NewFairnessBook: %d resources: the count cannot be negative", resources))
	}
	return &FairnessBook{window: w, resources: resources, accounts: make(map[string]*accountBook)}
}

// Window returns the book's window.
func (b *FairnessBook) Window() Window { return b.window }

// Resources returns the number of entries every vector in the book has.
func (b *FairnessBook) Resources() int { return b.resources }

// TaskStarted records that a task of the account began to hold demand at
// time at: the account's rate U_i grows by demand and at becomes its last
// allocation.
func (b *FairnessBook) TaskStarted(account string, demand Vector, at Time) {
	if demand.Validate(b.resources) != nil {
		return
	}
	a := b.touch(account, at)
	t := a.clamp(at)
	b.advance(a, t)
	a.running++
	a.rate.Add(demand)
	a.lastAllocation = t
	a.allocated = true
	if b.window.Kind == WindowSliding {
		a.startSum.AddScaled(demand, b.rel(t))
	}
}

// TaskEnded records that a task of the account that started at started and
// held demand ended at time at. The book does not track tasks one by one:
// demand and started must be those the task was started with, and an end
// for an account with no running task is ignored. Only the sliding window
// uses started, to count the task's whole usage demand·(at−started) until
// it leaves the window; a started that differs from the (clamped) time the
// task was started at skews the account's running usage until it next has
// no task running, when the book resets it to exactly zero.
func (b *FairnessBook) TaskEnded(account string, demand Vector, started, at Time) {
	if demand.Validate(b.resources) != nil {
		return
	}
	a := b.accounts[account]
	if a == nil || a.running == 0 {
		return
	}
	t := a.clamp(at)
	b.advance(a, t)
	a.running--
	if a.running == 0 {
		// Exactly zero, not the residue of adding and subtracting the same
		// demands: an idle account must not accrue usage forever.
		clear(a.rate)
		clear(a.startSum)
	} else {
		a.rate.Sub(demand)
		clampNonNegative(a.rate)
	}
	if b.window.Kind == WindowSliding {
		s := min(started, t)
		if a.running > 0 {
			a.startSum.AddScaled(demand, -b.rel(s))
		}
		a.ended.push(t, demand, spanSeconds(t-s))
	}
}

// SetBaselineRate sets the account's non-sharing baseline rate from time at
// on. The book integrates it; computing it (partitions, task prefixes) is
// the caller's job, see NonSharingRate.
func (b *FairnessBook) SetBaselineRate(account string, rate Vector, at Time) {
	if rate.Validate(b.resources) != nil {
		return
	}
	a := b.touch(account, at)
	t := a.clamp(at)
	b.advance(a, t)
	copy(a.baselineRate, rate)
	if b.window.Kind == WindowSliding {
		a.segments.set(t, rate)
	}
}

// Account returns the account's state advanced to time at, assuming its
// current rates persist until then; a time before the account's last event
// gives the state at that event. It changes nothing, so the scheduler may
// look ahead (at the end of its quantum) freely. An unknown account has zero
// state.
func (b *FairnessBook) Account(account string, at Time) AccountFairness {
	var f AccountFairness
	b.AccountInto(account, at, &f)
	return f
}

// AccountInto is Account writing into f, reusing f's vectors when they have
// the right length, so that a scheduler pass over every account need not
// allocate. Vectors of any other length are replaced.
func (b *FairnessBook) AccountInto(account string, at Time, f *AccountFairness) {
	r := b.resources
	if len(f.Usage) != r || len(f.Baseline) != r || len(f.Rate) != r || len(f.BaselineRate) != r {
		buf := make(Vector, 4*r)
		f.Usage = buf[0*r : 1*r : 1*r]
		f.Baseline = buf[1*r : 2*r : 2*r]
		f.Rate = buf[2*r : 3*r : 3*r]
		f.BaselineRate = buf[3*r : 4*r : 4*r]
	}
	a := b.accounts[account]
	if a == nil {
		clear(f.Usage)
		clear(f.Baseline)
		clear(f.Rate)
		clear(f.BaselineRate)
		f.LastAllocation, f.Allocated = 0, false
		return
	}
	t := a.clamp(at)
	copy(f.Rate, a.rate)
	copy(f.BaselineRate, a.baselineRate)
	f.LastAllocation = a.lastAllocation
	f.Allocated = a.allocated
	if b.window.Kind == WindowSliding {
		cut := windowStart(t, b.window.Length)
		a.ended.sumSince(cut, f.Usage)
		now := b.rel(t)
		for j, d := range a.rate {
			f.Usage[j] += max(0, d*now-a.startSum[j])
		}
		a.segments.integral(cut, t, f.Baseline)
		return
	}
	copy(f.Usage, a.usage)
	copy(f.Baseline, a.baseline)
	b.integrate(f.Usage, a.rate, a.last, t)
	b.integrate(f.Baseline, a.baselineRate, a.last, t)
}

// Accounts returns the names of every account the book has seen, sorted.
func (b *FairnessBook) Accounts() []string { return slices.Clone(b.names) }

// touch returns the account's book, creating it with zero state at time at
// when it is new.
func (b *FairnessBook) touch(account string, at Time) *accountBook {
	if !b.hasOrigin {
		b.origin, b.hasOrigin = at, true
	}
	if a := b.accounts[account]; a != nil {
		return a
	}
	a := newAccountBook(b.resources, at)
	b.accounts[account] = a
	i := sort.SearchStrings(b.names, account)
	b.names = slices.Insert(b.names, i, account)
	return a
}

// rel is t in seconds since the book's origin.
func (b *FairnessBook) rel(t Time) float64 { return spanSeconds(t - b.origin) }

// advance brings the account's integrals from its last event to t ≥ last.
func (b *FairnessBook) advance(a *accountBook, t Time) {
	if b.window.Kind == WindowSliding {
		cut := windowStart(t, b.window.Length)
		a.ended.expire(cut)
		a.segments.expire(cut)
	} else {
		b.integrate(a.usage, a.rate, a.last, t)
		b.integrate(a.baseline, a.baselineRate, a.last, t)
	}
	a.last = t
}

// spanSeconds converts a span of Time to seconds.
func spanSeconds(d Time) float64 { return float64(d) / 1e9 }

func clampNonNegative(v Vector) {
	for j, x := range v {
		if x < 0 {
			v[j] = 0
		}
	}
}
