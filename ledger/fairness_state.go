package ledger

import (
	"errors"
	"fmt"
	"math"
)

// FairnessState is a fairness book as plain data, for the FSM's snapshots.
// It encodes to JSON deterministically (accounts sorted by name, slices in
// order), and RestoreFairnessBook turns it back into a book that continues
// exactly — bit for bit — as the saved one would have.
type FairnessState struct {
	Window    string `json:"window"` // as written by Window.String
	Resources int    `json:"resources"`
	// Origin is the zero of the sliding window's relative times, set by the
	// book's first event; HasOrigin is false until then.
	Origin    Time           `json:"origin"`
	HasOrigin bool           `json:"has_origin"`
	Accounts  []AccountState `json:"accounts"`
}

// AccountState is one account of a FairnessState.
type AccountState struct {
	Name string `json:"name"`
	// Updated is the time of the account's last event; the integrals are as
	// of Updated.
	Updated Time `json:"updated"`
	// Usage and Baseline are Ü and ∫baseline at Updated, for the none,
	// tumbling and decay windows; zero under sliding, which keeps Sliding.
	Usage          Vector `json:"usage"`
	Baseline       Vector `json:"baseline"`
	Rate           Vector `json:"rate"`
	BaselineRate   Vector `json:"baseline_rate"`
	Running        int    `json:"running"`
	LastAllocation Time   `json:"last_allocation"`
	Allocated      bool   `json:"allocated"`
	// Sliding is set under the sliding window only.
	Sliding *SlidingState `json:"sliding,omitempty"`
}

// SlidingState is the history the sliding window keeps for one account. The
// Cum fields are running totals from an internal zero that moves now and
// then (see rebaseAfter); the Expired counts say when it moves next.
type SlidingState struct {
	// StartSum is Σ demand·start over running tasks, start in seconds since
	// the book's Origin.
	StartSum Vector       `json:"start_sum"`
	Ended    []EndedEntry `json:"ended,omitempty"`
	// EndedBase is the running total the first Ended entry counts on from.
	EndedBase    Vector          `json:"ended_base,omitempty"`
	EndedExpired int             `json:"ended_expired"`
	Segments     []BaselineEntry `json:"segments,omitempty"`
	// SegmentsExpired counts segments dropped since the last rebase.
	SegmentsExpired int `json:"segments_expired"`
}

// EndedEntry is the usage of the tasks that ended at End: Cum minus the
// previous entry's Cum (or EndedBase).
type EndedEntry struct {
	End Time   `json:"end"`
	Cum Vector `json:"cum"`
}

// BaselineEntry is a baseline rate in force from Start until the next
// entry's Start; Cum is its integral up to Start.
type BaselineEntry struct {
	Start Time   `json:"start"`
	Rate  Vector `json:"rate"`
	Cum   Vector `json:"cum"`
}

// State returns the book as plain data. It shares nothing with the book.
func (b *FairnessBook) State() FairnessState {
	s := FairnessState{
		Window:    b.window.String(),
		Resources: b.resources,
		Origin:    b.origin,
		HasOrigin: b.hasOrigin,
		Accounts:  make([]AccountState, 0, len(b.names)),
	}
	for _, name := range b.names {
		a := b.accounts[name]
		as := AccountState{
			Name:           name,
			Updated:        a.last,
			Usage:          a.usage.Clone(),
			Baseline:       a.baseline.Clone(),
			Rate:           a.rate.Clone(),
			BaselineRate:   a.baselineRate.Clone(),
			Running:        a.running,
			LastAllocation: a.lastAllocation,
			Allocated:      a.allocated,
		}
		if b.window.Kind == WindowSliding {
			as.Sliding = a.slidingState()
		}
		s.Accounts = append(s.Accounts, as)
	}
	return s
}

func (a *accountBook) slidingState() *SlidingState {
	s := &SlidingState{
		StartSum:        a.startSum.Clone(),
		EndedExpired:    a.ended.expired,
		SegmentsExpired: a.segments.expired,
	}
	if a.ended.hasBase {
		s.EndedBase = Vector(a.ended.base).Clone()
	}
	for i := a.ended.head; i < len(a.ended.ends); i++ {
		s.Ended = append(s.Ended, EndedEntry{End: a.ended.ends[i], Cum: Vector(a.ended.at(i)).Clone()})
	}
	for k := a.segments.head; k < len(a.segments.starts); k++ {
		s.Segments = append(s.Segments, BaselineEntry{
			Start: a.segments.starts[k],
			Rate:  Vector(a.segments.rate(k)).Clone(),
			Cum:   Vector(a.segments.cumAt(k)).Clone(),
		})
	}
	return s
}

// RestoreFairnessBook rebuilds a book from State. It checks the state
// first and, when it is not one State could have produced, says what is
// wrong and returns no book.
func RestoreFairnessBook(s FairnessState) (*FairnessBook, error) {
	fail := func(err error) (*FairnessBook, error) {
		return nil, fmt.Errorf("restore fairness book: %w (the snapshot is damaged or from an incompatible version; restore another snapshot)", err)
	}
	w, err := ParseWindow(s.Window)
	if err != nil {
		return fail(err)
	}
	if s.Resources < 0 {
		return fail(fmt.Errorf("%d resources: the count cannot be negative", s.Resources))
	}
	if !s.HasOrigin && len(s.Accounts) > 0 {
		return fail(errors.New("accounts are present but no event time origin is set"))
	}
	b := NewFairnessBook(w, s.Resources)
	b.origin, b.hasOrigin = s.Origin, s.HasOrigin
	for i, as := range s.Accounts {
		if i > 0 && as.Name <= s.Accounts[i-1].Name {
			return fail(fmt.Errorf("account %q follows %q: accounts must be sorted and unique", as.Name, s.Accounts[i-1].Name))
		}
		a, err := restoreAccount(w, s.Resources, as)
		if err != nil {
			return fail(fmt.Errorf("account %q: %w", as.Name, err))
		}
		b.accounts[as.Name] = a
		b.names = append(b.names, as.Name)
	}
	return b, nil
}

func restoreAccount(w Window, n int, s AccountState) (*accountBook, error) {
	for _, f := range []struct {
		name string
		v    Vector
	}{{"usage", s.Usage}, {"baseline", s.Baseline}, {"rate", s.Rate}, {"baseline rate", s.BaselineRate}} {
		if err := f.v.Validate(n); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if s.Running < 0 {
		return nil, fmt.Errorf("%d running tasks: the count cannot be negative", s.Running)
	}
	if s.Running == 0 && !s.Rate.IsZero() {
		return nil, errors.New("no task is running but the rate is not zero")
	}
	if s.Allocated && s.LastAllocation > s.Updated {
		return nil, fmt.Errorf("last allocation %d is after the last update %d", s.LastAllocation, s.Updated)
	}
	a := newAccountBook(n, s.Updated)
	copy(a.usage, s.Usage)
	copy(a.baseline, s.Baseline)
	copy(a.rate, s.Rate)
	copy(a.baselineRate, s.BaselineRate)
	a.running = s.Running
	a.lastAllocation = s.LastAllocation
	a.allocated = s.Allocated
	if w.Kind != WindowSliding {
		if s.Sliding != nil {
			return nil, fmt.Errorf("sliding-window history present under window %s", w)
		}
		return a, nil
	}
	if !s.Usage.IsZero() || !s.Baseline.IsZero() {
		return nil, errors.New("usage and baseline must be zero under a sliding window, which derives them from its history")
	}
	if s.Sliding == nil {
		return nil, errors.New("sliding-window history is missing")
	}
	if err := a.restoreSliding(n, s.Running, *s.Sliding); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *accountBook) restoreSliding(n, running int, s SlidingState) error {
	if err := validFinite(s.StartSum, n); err != nil {
		return fmt.Errorf("start sum: %w", err)
	}
	if running == 0 && !s.StartSum.IsZero() {
		return errors.New("no task is running but the start sum is not zero")
	}
	copy(a.startSum, s.StartSum)
	if s.EndedExpired < 0 || s.SegmentsExpired < 0 {
		return errors.New("expired counts cannot be negative")
	}

	if len(s.Ended) == 0 && (s.EndedBase != nil || s.EndedExpired != 0) {
		return errors.New("ended-task base or count present without ended tasks")
	}
	prev := s.EndedBase
	if prev != nil {
		if err := prev.Validate(n); err != nil {
			return fmt.Errorf("ended-task base: %w", err)
		}
		a.ended.base, a.ended.hasBase = prev.Clone(), true
	}
	for i, e := range s.Ended {
		if err := e.Cum.Validate(n); err != nil {
			return fmt.Errorf("ended entry %d: %w", i, err)
		}
		if e.End > a.last || (i > 0 && e.End <= s.Ended[i-1].End) {
			return fmt.Errorf("ended entry %d at %d: ends must increase and not pass the last update %d", i, e.End, a.last)
		}
		if prev != nil && !nonDecreasing(prev, e.Cum) {
			return fmt.Errorf("ended entry %d: running totals must not decrease", i)
		}
		a.ended.ends = append(a.ended.ends, e.End)
		a.ended.cum = append(a.ended.cum, e.Cum...)
		prev = e.Cum
	}
	a.ended.expired = s.EndedExpired

	var prevSeg *BaselineEntry
	for k, e := range s.Segments {
		if err := e.Rate.Validate(n); err != nil {
			return fmt.Errorf("baseline segment %d rate: %w", k, err)
		}
		if err := e.Cum.Validate(n); err != nil {
			return fmt.Errorf("baseline segment %d: %w", k, err)
		}
		if e.Start > a.last || (prevSeg != nil && e.Start <= prevSeg.Start) {
			return fmt.Errorf("baseline segment %d at %d: starts must increase and not pass the last update %d", k, e.Start, a.last)
		}
		if prevSeg != nil && !nonDecreasing(prevSeg.Cum, e.Cum) {
			return fmt.Errorf("baseline segment %d: running totals must not decrease", k)
		}
		a.segments.starts = append(a.segments.starts, e.Start)
		a.segments.rates = append(a.segments.rates, e.Rate...)
		a.segments.cum = append(a.segments.cum, e.Cum...)
		prevSeg = &s.Segments[k]
	}
	if len(s.Segments) > 0 && !equalRates(a.baselineRate, s.Segments[len(s.Segments)-1].Rate) {
		return errors.New("the last baseline segment's rate differs from the baseline rate")
	}
	if len(s.Segments) == 0 && (!a.baselineRate.IsZero() || s.SegmentsExpired != 0) {
		return errors.New("a baseline rate or expired count is set without baseline segments")
	}
	a.segments.expired = s.SegmentsExpired
	return nil
}

// validFinite checks length and finiteness; unlike Vector.Validate it lets
// components be negative.
func validFinite(v Vector, n int) error {
	if len(v) != n {
		return fmt.Errorf("vector has %d entries, want %d", len(v), n)
	}
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("resource %d is %v: it must be finite", j, x)
		}
	}
	return nil
}

func nonDecreasing(a, b Vector) bool {
	for j := range a {
		if b[j] < a[j] {
			return false
		}
	}
	return true
}
