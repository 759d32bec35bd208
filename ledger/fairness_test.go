package ledger

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// unixBase puts generated streams at realistic Unix times (2023, in ns), so
// the tests see the magnitudes the live system does.
const unixBase = Time(1_700_000_000 * 1e9)

var testWindows = []Window{
	{Kind: WindowNone},
	{WindowTumbling, 6 * time.Hour},
	{WindowTumbling, 45 * time.Minute},
	{WindowSliding, 6 * time.Hour},
	{WindowSliding, 30 * time.Minute},
	{WindowDecay, 3 * time.Hour},
	{WindowDecay, 7 * 24 * time.Hour},
}

// closeTo compares the book's vector with the reference's. The tolerance is
// relative to the figure and to scale, the size of one large task running
// for an hour, which bounds the rounding of sums that cancel.
func closeTo(got, want, scale Vector) error {
	if len(got) != len(want) {
		return fmt.Errorf("length %d, want %d", len(got), len(want))
	}
	for j := range want {
		tol := 1e-9 * (math.Abs(want[j]) + scale[j])
		if !(math.Abs(got[j]-want[j]) <= tol) {
			return fmt.Errorf("resource %d: got %.17g, want %.17g (off by %.3g)", j, got[j], want[j], got[j]-want[j])
		}
	}
	return nil
}

var genScale = Vector{64 * 3600, 6.4e10 * 3600, 2 * 3600}

// TestFairnessBookMatchesReference feeds random event streams to a book per
// window and to the brute-force reference, and compares every figure at
// every query.
func TestFairnessBookMatchesReference(t *testing.T) {
	// Seed 1 spreads events over arbitrary nanoseconds; the others put them
	// on whole minutes from a midnight, so that task ends fall exactly on
	// sliding-window edges and events on tumbling boundaries.
	midnight := unixBase - unixBase%Time(24*time.Hour)
	for seed := uint64(1); seed <= 3; seed++ {
		cfg := genConfig{accounts: []string{"astro", "bio", "chem"}, steps: 3000, origin: unixBase, maxStep: 40 * time.Minute}
		if seed > 1 {
			cfg.origin, cfg.grain = midnight, 5*time.Minute
		}
		ops := randomOps(seed, cfg)
		for _, w := range testWindows {
			t.Run(fmt.Sprintf("seed%d/%s", seed, w), func(t *testing.T) {
				book := NewFairnessBook(w, genResources)
				ref := newReference(genResources)
				queries := 0
				for i, o := range ops {
					if o.kind != opQuery {
						o.apply(book)
						ref.record(o)
						continue
					}
					queries++
					got := book.Account(o.account, o.at)
					if err := closeTo(got.Usage, ref.usage(w, o.account, o.at), genScale); err != nil {
						t.Fatalf("op %d %v: usage: %v", i, o, err)
					}
					if err := closeTo(got.Baseline, ref.baseline(w, o.account, o.at), genScale); err != nil {
						t.Fatalf("op %d %v: baseline: %v", i, o, err)
					}
					if err := closeTo(got.Rate, ref.rate(o.account), genScale); err != nil {
						t.Fatalf("op %d %v: rate: %v", i, o, err)
					}
					wantRate := NewVector(genResources)
					if rs := ref.rates[o.account]; len(rs) > 0 {
						wantRate = rs[len(rs)-1].rate
					}
					if !slices.Equal(got.BaselineRate, wantRate) {
						t.Fatalf("op %d %v: baseline rate %v, want %v", i, o, got.BaselineRate, wantRate)
					}
					last, allocated := ref.lastAllocation(o.account)
					if got.Allocated != allocated || (allocated && got.LastAllocation != last) {
						t.Fatalf("op %d %v: last allocation %d/%v, want %d/%v", i, o, got.LastAllocation, got.Allocated, last, allocated)
					}
				}
				if queries < 100 {
					t.Fatalf("only %d queries: the stream does not exercise the book", queries)
				}
			})
		}
	}
}

// TestLongWindowsEqualNone: a tumbling or sliding window longer than all of
// history remembers everything, like none.
func TestLongWindowsEqualNone(t *testing.T) {
	// Epoch-aligned tumbling windows of 2^62 ns (146 years) put the whole
	// stream inside the first one.
	long := time.Duration(1 << 62)
	cfg := genConfig{accounts: []string{"a", "b"}, steps: 2000, origin: unixBase, maxStep: 2 * time.Hour}
	ops := randomOps(7, cfg)
	none := NewFairnessBook(Window{Kind: WindowNone}, genResources)
	tumbling := NewFairnessBook(Window{WindowTumbling, long}, genResources)
	sliding := NewFairnessBook(Window{WindowSliding, long}, genResources)
	for i, o := range ops {
		if o.kind != opQuery {
			for _, b := range []*FairnessBook{none, tumbling, sliding} {
				o.apply(b)
			}
			continue
		}
		want := none.Account(o.account, o.at)
		if got := tumbling.Account(o.account, o.at); !reflect.DeepEqual(got, want) {
			t.Fatalf("op %d: tumbling %+v, none %+v", i, got, want)
		}
		got := sliding.Account(o.account, o.at)
		if err := closeTo(got.Usage, want.Usage, genScale); err != nil {
			t.Fatalf("op %d: sliding usage vs none: %v", i, err)
		}
		if err := closeTo(got.Baseline, want.Baseline, genScale); err != nil {
			t.Fatalf("op %d: sliding baseline vs none: %v", i, err)
		}
	}
}

func TestDecayHalvesAfterOneHalfLife(t *testing.T) {
	h := 5 * time.Hour
	b := NewFairnessBook(Window{WindowDecay, h}, 2)
	d := Vector{4, 8e9}
	b.TaskStarted("a", d, unixBase)
	b.SetBaselineRate("a", Vector{2, 1e9}, unixBase)
	end := unixBase.Add(90 * time.Minute)
	b.TaskEnded("a", d, unixBase, end)
	b.SetBaselineRate("a", Vector{0, 0}, end)
	before := b.Account("a", end)
	after := b.Account("a", end.Add(h))
	for j := range before.Usage {
		if math.Abs(after.Usage[j]-before.Usage[j]/2) > 1e-12*before.Usage[j] {
			t.Errorf("usage %d: %v one half-life after %v, want half", j, after.Usage[j], before.Usage[j])
		}
		if math.Abs(after.Baseline[j]-before.Baseline[j]/2) > 1e-12*before.Baseline[j] {
			t.Errorf("baseline %d: %v one half-life after %v, want half", j, after.Baseline[j], before.Baseline[j])
		}
	}
	// Over the 90 minutes of running the usage must be below the undecayed
	// integral d·5400s, and above it decayed by the full 90 minutes.
	for j, x := range before.Usage {
		full := d[j] * 5400
		if !(x < full && x > full*math.Exp2(-1.5/5)) {
			t.Errorf("usage %d after 90 min running: %v, want in (%v, %v)", j, x, full*math.Exp2(-1.5/5), full)
		}
	}
}

func TestDecayConvergesToRateTimesMeanLife(t *testing.T) {
	h := 2 * time.Hour
	b := NewFairnessBook(Window{WindowDecay, h}, 2)
	d := Vector{3, 5e9}
	b.TaskStarted("a", d, unixBase)
	// Advance through many small events, as the live system does, and then
	// far ahead in one look.
	for i := 1; i <= 2000; i++ {
		b.SetBaselineRate("a", Vector{float64(i % 2), 0}, unixBase.Add(time.Duration(i)*time.Minute))
	}
	got := b.Account("a", unixBase.Add(30*h))
	for j := range d {
		want := d[j] * h.Seconds() / math.Ln2
		if math.Abs(got.Usage[j]-want) > 1e-9*want {
			t.Errorf("usage %d: %v after 30 half-lives at a constant rate, want rate·H/ln2 = %v", j, got.Usage[j], want)
		}
	}
}

func TestTumblingRestartsAtBoundaries(t *testing.T) {
	l := time.Hour
	b := NewFairnessBook(Window{WindowTumbling, l}, 1)
	// Windows are epoch-aligned: they start at whole hours.
	hour := unixBase - unixBase%Time(l)
	start := hour.Add(30 * time.Minute)
	b.TaskStarted("a", Vector{2}, start)
	b.SetBaselineRate("a", Vector{1}, start)
	at := func(d time.Duration) AccountFairness { return b.Account("a", hour.Add(d)) }
	if got := at(59 * time.Minute).Usage[0]; got != 2*29*60 {
		t.Errorf("usage in the first window: %v, want 2 cpu × 29 min", got)
	}
	// The task spans the boundary at 1h: only the part after it counts.
	if got := at(75 * time.Minute).Usage[0]; got != 2*15*60 {
		t.Errorf("usage 15 min into the next window: %v, want 2 cpu × 15 min", got)
	}
	if got := at(75 * time.Minute).Baseline[0]; got != 15*60 {
		t.Errorf("baseline 15 min into the next window: %v, want 1 × 15 min", got)
	}
	if got := at(time.Hour).Usage[0]; got != 0 {
		t.Errorf("usage exactly at the boundary: %v, want 0", got)
	}
	// An idle account is forgotten at the next boundary too.
	b.TaskEnded("a", Vector{2}, start, hour.Add(100*time.Minute))
	if got := at(110 * time.Minute).Usage[0]; got != 2*40*60 {
		t.Errorf("usage after the task ended in the second window: %v, want 2 cpu × 40 min", got)
	}
	if got := at(121 * time.Minute).Usage[0]; got != 0 {
		t.Errorf("usage in the third window with nothing running: %v, want 0", got)
	}
}

func TestSlidingCountsTasksByEndTime(t *testing.T) {
	l := 2 * time.Hour
	b := NewFairnessBook(Window{WindowSliding, l}, 1)
	b.TaskStarted("a", Vector{1}, unixBase)
	// A running task counts from its start, even from before the window.
	if got := b.Account("a", unixBase.Add(5*time.Hour)).Usage[0]; got != 5*3600 {
		t.Errorf("running task after 5h: %v, want 5h in full", got)
	}
	b.TaskEnded("a", Vector{1}, unixBase, unixBase.Add(5*time.Hour))
	// It keeps counting in full while its end is within the window…
	if got := b.Account("a", unixBase.Add(7*time.Hour)).Usage[0]; got != 5*3600 {
		t.Errorf("2h after the end: %v, want 5h in full", got)
	}
	// …and not at all once the end has left it.
	if got := b.Account("a", unixBase.Add(7*time.Hour+1)).Usage[0]; got != 0 {
		t.Errorf("just over 2h after the end: %v, want 0", got)
	}
}

func TestSlidingBaselineTrimsOldestSegment(t *testing.T) {
	b := NewFairnessBook(Window{WindowSliding, time.Hour}, 1)
	b.SetBaselineRate("a", Vector{3}, unixBase)
	b.SetBaselineRate("a", Vector{1}, unixBase.Add(2*time.Hour))
	// Window [1h30, 2h30]: 30 min at 3 and 30 min at 1.
	if got := b.Account("a", unixBase.Add(150*time.Minute)).Baseline[0]; got != 3*1800+1*1800 {
		t.Errorf("baseline over a window holding two segments: %v, want 3×30min + 1×30min", got)
	}
	// Window [2h, 3h]: all at 1.
	if got := b.Account("a", unixBase.Add(3*time.Hour)).Baseline[0]; got != 3600 {
		t.Errorf("baseline once the first segment left the window: %v, want 1×1h", got)
	}
}

// TestPaperExample4 replays H-MRF's allocation of the paper's Example 4
// (Fig. 5) through the book in one-hour slots and checks the sharing degrees
// and aggregate resource values the paper gives.
func TestPaperExample4(t *testing.T) {
	slot := time.Hour
	capacity := Vector{100, 100} // 100 CPUs, 100 GB, contributed equally
	share := Share(capacity, 1, 2)
	demandA, demandB := Vector{1, 2}, Vector{1, 1}
	type slotPlan struct {
		runA, runB   int // tasks H-MRF runs (Fig. 5)
		wantA, wantB int // tasks each account has to run
	}
	plan := []slotPlan{{15, 70, 15, 80}, {40, 20, 60, 40}}
	wantBeta := [][2]float64{{1, 1.4}, {1.375, 1}}
	wantAggregate := [][2]float64{{45, 140}, {165, 180}} // Σ over resources, in resource-slots

	for _, w := range []Window{{Kind: WindowNone}, {WindowSliding, 3 * slot}, {WindowTumbling, 1 << 62}} {
		b := NewFairnessBook(w, 2)
		for s, p := range plan {
			start := unixBase.Add(time.Duration(s) * slot)
			for range p.runA {
				b.TaskStarted("A", demandA, start)
			}
			for range p.runB {
				b.TaskStarted("B", demandB, start)
			}
			b.SetBaselineRate("A", NonSharingRate(share, []TaskGroup{{demandA, p.wantA}}), start)
			b.SetBaselineRate("B", NonSharingRate(share, []TaskGroup{{demandB, p.wantB}}), start)
			end := start.Add(slot)
			for k, acct := range []string{"A", "B"} {
				f := b.Account(acct, end)
				if got := Beta(f.Usage, f.Baseline); math.Abs(got-wantBeta[s][k]) > 1e-12 {
					t.Errorf("%v: β_%s(t%d) = %v, want %v", w, acct, s+1, got, wantBeta[s][k])
				}
				if got := f.Usage.Sum() / slot.Seconds(); math.Abs(got-wantAggregate[s][k]) > 1e-9 {
					t.Errorf("%v: aggregate of %s at t%d = %v, want %v", w, acct, s+1, got, wantAggregate[s][k])
				}
			}
			for range p.runA {
				b.TaskEnded("A", demandA, start, end)
			}
			for range p.runB {
				b.TaskEnded("B", demandB, start, end)
			}
		}
	}
}

// TestAccountDoesNotChangeHistory: looking, even far ahead, changes nothing
// the book later reports, and looking twice gives the same answer.
func TestAccountDoesNotChangeHistory(t *testing.T) {
	cfg := genConfig{accounts: []string{"a", "b", "c"}, steps: 1500, origin: unixBase, maxStep: 30 * time.Minute}
	ops := randomOps(11, cfg)
	for _, w := range testWindows {
		looked := NewFairnessBook(w, genResources)
		untouched := NewFairnessBook(w, genResources)
		for i, o := range ops {
			if o.kind != opQuery {
				o.apply(looked)
				o.apply(untouched)
				continue
			}
			first := looked.Account(o.account, o.at)
			_ = looked.Account(o.account, o.at.Add(48*time.Hour))
			_ = looked.Account(o.account, o.at-Time(time.Hour))
			if again := looked.Account(o.account, o.at); !reflect.DeepEqual(first, again) {
				t.Fatalf("%v op %d: two looks at the same time differ: %+v then %+v", w, i, first, again)
			}
			if want := untouched.Account(o.account, o.at); !reflect.DeepEqual(first, want) {
				t.Fatalf("%v op %d: a book that was looked at reports %+v, one that was not %+v", w, i, first, want)
			}
		}
		if !reflect.DeepEqual(looked.State(), untouched.State()) {
			t.Fatalf("%v: looking changed the book's state", w)
		}
	}
}

func TestEarlierTimesAreClampedToTheLastEvent(t *testing.T) {
	for _, w := range testWindows {
		b := NewFairnessBook(w, 1)
		t0 := unixBase.Add(10 * time.Hour)
		b.TaskStarted("a", Vector{2}, t0)
		b.SetBaselineRate("a", Vector{1}, t0)
		// An end stamped before the start is taken as happening at the start:
		// no negative interval, no negative usage.
		b.TaskEnded("a", Vector{2}, t0, t0-Time(time.Hour))
		f := b.Account("a", t0-Time(3*time.Hour))
		if f.Usage[0] != 0 || f.Baseline[0] != 0 || f.Rate[0] != 0 {
			t.Errorf("%v: after an end stamped early, state %+v, want zero usage, baseline and rate", w, f)
		}
		// A start stamped early counts from the last event on.
		b.TaskStarted("a", Vector{1}, t0-Time(time.Hour))
		f = b.Account("a", t0.Add(time.Minute))
		if f.LastAllocation != t0 {
			t.Errorf("%v: last allocation %d, want the clamped %d", w, f.LastAllocation, t0)
		}
		if w.Kind == WindowNone && (f.Usage[0] != 60 || f.Baseline[0] != 60) {
			t.Errorf("%v: one minute after a clamped start: %+v, want 60 cpu-s and 60 baseline-s", w, f)
		}
	}
}

func TestInvalidInputChangesNothing(t *testing.T) {
	for _, w := range testWindows {
		b := NewFairnessBook(w, 2)
		b.TaskStarted("a", Vector{1, 1}, unixBase)
		before := b.State()
		later := unixBase.Add(time.Hour)
		b.TaskStarted("a", Vector{1}, later)                       // too short
		b.TaskStarted("a", Vector{1, 2, 3}, later)                 // too long
		b.TaskStarted("a", Vector{-1, 0}, later)                   // negative
		b.TaskStarted("a", Vector{math.NaN(), 0}, later)           // not a number
		b.SetBaselineRate("a", Vector{math.Inf(1), 0}, later)      // infinite
		b.TaskEnded("a", Vector{1}, unixBase, later)               // too short
		b.TaskEnded("ghost", Vector{1, 1}, unixBase, later)        // account never seen
		b.TaskStarted("b", nil, later)                             // no vector at all
		b.SetBaselineRate("c", Vector{1, 2, 3, 4, 5, 6, 7}, later) // too long
		if after := b.State(); !reflect.DeepEqual(before, after) {
			t.Errorf("%v: invalid events changed the book:\nbefore %+v\nafter  %+v", w, before, after)
		}
		// A second end of the same task is ignored: there is nothing running.
		b.TaskEnded("a", Vector{1, 1}, unixBase, later)
		settled := b.State()
		b.TaskEnded("a", Vector{1, 1}, unixBase, later)
		if after := b.State(); !reflect.DeepEqual(settled, after) {
			t.Errorf("%v: ending a task with none running changed the book", w)
		}
		if f := b.Account("a", later.Add(time.Hour)); f.Rate[0] != 0 || f.Rate[1] != 0 {
			t.Errorf("%v: rate %v after every task ended, want zero", w, f.Rate)
		}
	}
}

func TestUnknownAccountsAndNames(t *testing.T) {
	b := NewFairnessBook(Window{WindowSliding, time.Hour}, 2)
	f := b.Account("nobody", unixBase)
	if f.Allocated || !f.Usage.IsZero() || len(f.Usage) != 2 || len(f.Baseline) != 2 || len(f.Rate) != 2 || len(f.BaselineRate) != 2 {
		t.Errorf("unknown account: %+v, want zero vectors of 2 resources", f)
	}
	if names := b.Accounts(); len(names) != 0 {
		t.Errorf("Account created %v", names)
	}
	for _, n := range []string{"zeta", "alpha", "mid", "alpha"} {
		b.SetBaselineRate(n, Vector{1, 1}, unixBase)
	}
	names := b.Accounts()
	if want := []string{"alpha", "mid", "zeta"}; !slices.Equal(names, want) {
		t.Errorf("Accounts() = %v, want %v", names, want)
	}
	names[0] = "changed"
	if b.Accounts()[0] != "alpha" {
		t.Error("Accounts returned the book's own slice")
	}
	g := b.Account("alpha", unixBase)
	g.BaselineRate[0] = 99
	if b.Account("alpha", unixBase).BaselineRate[0] != 1 {
		t.Error("Account returned the book's own vector")
	}
}

// TestSlidingQueuesStayBounded: with a steady stream of short tasks the
// sliding window's history holds about what is in the window, not all of it.
func TestSlidingQueuesStayBounded(t *testing.T) {
	l := time.Hour
	b := NewFairnessBook(Window{WindowSliding, l}, 1)
	now := unixBase
	for i := range 20000 {
		b.SetBaselineRate("a", Vector{float64(i % 3)}, now)
		b.TaskStarted("a", Vector{1}, now)
		b.TaskEnded("a", Vector{1}, now, now.Add(time.Minute))
		now = now.Add(time.Minute)
	}
	a := b.accounts["a"]
	// 60 entries fit in the window; rebasing keeps at most as many expired
	// ones (and at least rebaseAfter) beside them.
	if n := len(a.ended.ends); n > 2*61+rebaseAfter {
		t.Errorf("ended-task queue holds %d entries for a window of about 60", n)
	}
	if n := len(a.segments.starts); n > 2*61+rebaseAfter {
		t.Errorf("baseline queue holds %d segments for a window of about 60", n)
	}
	f := b.Account("a", now)
	if f.Usage[0] != 61*60 {
		t.Errorf("usage %v, want the 61 one-minute tasks that ended within the closed hour", f.Usage[0])
	}
	if math.Abs(f.Baseline[0]-3600) > 1e-9 { // rates 0,1,2 cycling: mean 1
		t.Errorf("baseline %v, want 3600", f.Baseline[0])
	}
}

func TestNewFairnessBookRefusesInvalidWindows(t *testing.T) {
	for _, w := range []Window{{WindowTumbling, 0}, {WindowDecay, -time.Hour}, {"yearly", time.Hour}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewFairnessBook(%+v) accepted an invalid window", w)
				}
			}()
			NewFairnessBook(w, 1)
		}()
	}
	if got := NewFairnessBook(Window{}, 1).Window(); got.Kind != WindowNone {
		t.Errorf("the zero Window became %+v, want none", got)
	}
}

// TestAccountIntoReusesVectors: AccountInto reports what Account does and,
// given vectors of the right size, allocates nothing.
func TestAccountIntoReusesVectors(t *testing.T) {
	cfg := genConfig{accounts: []string{"a", "b"}, steps: 800, origin: unixBase, maxStep: 30 * time.Minute}
	ops := randomOps(5, cfg)
	for _, w := range testWindows {
		b := NewFairnessBook(w, genResources)
		var into AccountFairness
		for i, o := range ops {
			if o.kind != opQuery {
				o.apply(b)
				continue
			}
			b.AccountInto(o.account, o.at, &into)
			if want := b.Account(o.account, o.at); !reflect.DeepEqual(into, want) {
				t.Fatalf("%v op %d: AccountInto %+v, Account %+v", w, i, into, want)
			}
		}
		last := ops[len(ops)-1].at
		if n := testing.AllocsPerRun(100, func() { b.AccountInto("a", last, &into) }); n != 0 {
			t.Errorf("%v: AccountInto allocates %v times per call with reusable vectors", w, n)
		}
	}
}
