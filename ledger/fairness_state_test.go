package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// roundTrip saves a book as JSON and restores it, as the FSM's snapshots do.
func roundTrip(t *testing.T, b *FairnessBook) *FairnessBook {
	t.Helper()
	data, err := json.Marshal(b.State())
	if err != nil {
		t.Fatalf("encode state: %v", err)
	}
	var s FairnessState
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("decode state: %v", err)
	}
	restored, err := RestoreFairnessBook(s)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	again, err := json.Marshal(restored.State())
	if err != nil {
		t.Fatalf("encode restored state: %v", err)
	}
	if !bytes.Equal(data, again) {
		t.Fatalf("restored book saves differently:\n%s\n%s", data, again)
	}
	return restored
}

// TestStateRoundTripContinuesIdentically stops a book at several points,
// saves and restores it, and checks that the restored book and the one that
// never stopped report bit-identical figures for the rest of the stream.
func TestStateRoundTripContinuesIdentically(t *testing.T) {
	cfg := genConfig{accounts: []string{"astro", "bio", "chem", "dust"}, steps: 2500, origin: unixBase, maxStep: 20 * time.Minute}
	ops := randomOps(23, cfg)
	for _, w := range testWindows {
		for _, stop := range []int{0, 1, 400, len(ops) / 2, len(ops) - 1} {
			never := NewFairnessBook(w, genResources)
			for _, o := range ops[:stop] {
				o.apply(never)
			}
			restored := roundTrip(t, never)
			for i, o := range ops[stop:] {
				if o.kind != opQuery {
					o.apply(never)
					o.apply(restored)
					continue
				}
				want := never.Account(o.account, o.at)
				if got := restored.Account(o.account, o.at); !reflect.DeepEqual(got, want) {
					t.Fatalf("%v stopped at %d, op %d: restored %+v, never stopped %+v", w, stop, stop+i, got, want)
				}
			}
			a, _ := json.Marshal(never.State())
			b, _ := json.Marshal(restored.State())
			if !bytes.Equal(a, b) {
				t.Fatalf("%v stopped at %d: final states differ", w, stop)
			}
		}
	}
}

func TestStateIsDeterministic(t *testing.T) {
	// Accounts created in a different order save the same bytes.
	one := NewFairnessBook(Window{WindowSliding, time.Hour}, 1)
	two := NewFairnessBook(Window{WindowSliding, time.Hour}, 1)
	names := []string{"m", "a", "z", "k"}
	for i, n := range names {
		one.TaskStarted(n, Vector{1}, unixBase)
		two.TaskStarted(names[len(names)-1-i], Vector{1}, unixBase)
	}
	a, _ := json.Marshal(one.State())
	b, _ := json.Marshal(two.State())
	if !bytes.Equal(a, b) {
		t.Fatalf("same history, different bytes:\n%s\n%s", a, b)
	}
	s := one.State()
	for i := 1; i < len(s.Accounts); i++ {
		if s.Accounts[i-1].Name >= s.Accounts[i].Name {
			t.Fatalf("state accounts not sorted: %q before %q", s.Accounts[i-1].Name, s.Accounts[i].Name)
		}
	}
}

func TestStateSharesNothingWithTheBook(t *testing.T) {
	b := NewFairnessBook(Window{WindowSliding, time.Hour}, 1)
	b.TaskStarted("a", Vector{1}, unixBase)
	b.SetBaselineRate("a", Vector{2}, unixBase)
	b.TaskEnded("a", Vector{1}, unixBase, unixBase.Add(time.Minute))
	want := b.Account("a", unixBase.Add(time.Hour))
	s := b.State()
	s.Accounts[0].Rate[0] = 42
	s.Accounts[0].Sliding.Ended[0].Cum[0] = 42
	s.Accounts[0].Sliding.Segments[0].Rate[0] = 42
	if got := b.Account("a", unixBase.Add(time.Hour)); !reflect.DeepEqual(got, want) {
		t.Fatalf("editing the state changed the book: %+v, was %+v", got, want)
	}
}

// validSlidingState is a small state with every part a sliding window keeps.
func validSlidingState(t *testing.T) FairnessState {
	t.Helper()
	b := NewFairnessBook(Window{WindowSliding, time.Hour}, 2)
	b.TaskStarted("a", Vector{1, 2}, unixBase)
	b.TaskStarted("a", Vector{1, 2}, unixBase)
	b.SetBaselineRate("a", Vector{1, 1}, unixBase)
	b.TaskEnded("a", Vector{1, 2}, unixBase, unixBase.Add(time.Minute))
	b.SetBaselineRate("a", Vector{2, 1}, unixBase.Add(2*time.Minute))
	b.TaskEnded("a", Vector{1, 2}, unixBase, unixBase.Add(3*time.Minute))
	b.TaskStarted("a", Vector{1, 2}, unixBase.Add(3*time.Minute))
	b.TaskStarted("b", Vector{0, 1}, unixBase.Add(4*time.Minute))
	s := b.State()
	if _, err := RestoreFairnessBook(s); err != nil {
		t.Fatalf("a valid state is refused: %v", err)
	}
	return s
}

func TestRestoreRefusesDamagedStates(t *testing.T) {
	cases := []struct {
		name   string
		damage func(s *FairnessState)
		want   string
	}{
		{"bad window", func(s *FairnessState) { s.Window = "weekly:1h" }, "unknown kind"},
		{"zero window", func(s *FairnessState) { s.Window = "sliding:0s" }, "must be positive"},
		{"negative resources", func(s *FairnessState) { s.Resources = -1 }, "cannot be negative"},
		{"no origin", func(s *FairnessState) { s.HasOrigin = false }, "origin"},
		{"unsorted accounts", func(s *FairnessState) { s.Accounts[0], s.Accounts[1] = s.Accounts[1], s.Accounts[0] }, "sorted"},
		{"duplicate account", func(s *FairnessState) { s.Accounts[1].Name = s.Accounts[0].Name }, "unique"},
		{"short rate", func(s *FairnessState) { s.Accounts[0].Rate = Vector{1} }, "rate"},
		{"NaN usage", func(s *FairnessState) { s.Accounts[0].Usage = Vector{math.NaN(), 0} }, "usage"},
		{"negative baseline rate", func(s *FairnessState) { s.Accounts[0].BaselineRate = Vector{-1, 1} }, "baseline rate"},
		{"negative running", func(s *FairnessState) { s.Accounts[0].Running = -1 }, "cannot be negative"},
		{"rate without tasks", func(s *FairnessState) { s.Accounts[0].Running = 0 }, "rate is not zero"},
		{"allocation after update", func(s *FairnessState) { s.Accounts[0].LastAllocation = s.Accounts[0].Updated + 1 }, "after the last update"},
		{"usage under sliding", func(s *FairnessState) { s.Accounts[0].Usage = Vector{1, 0} }, "must be zero"},
		{"missing history", func(s *FairnessState) { s.Accounts[0].Sliding = nil }, "missing"},
		{"history under none", func(s *FairnessState) { s.Window = "none" }, "sliding-window history"},
		{"infinite start sum", func(s *FairnessState) { s.Accounts[0].Sliding.StartSum = Vector{math.Inf(-1), 0} }, "start sum"},
		{"ended in the future", func(s *FairnessState) {
			s.Accounts[0].Sliding.Ended[1].End = s.Accounts[0].Updated + 1
		}, "ends must increase"},
		{"ended out of order", func(s *FairnessState) {
			e := s.Accounts[0].Sliding.Ended
			e[0].End, e[1].End = e[1].End, e[0].End
		}, "ends must increase"},
		{"totals decrease", func(s *FairnessState) {
			e := s.Accounts[0].Sliding.Ended
			e[0].Cum, e[1].Cum = e[1].Cum, e[0].Cum
		}, "must not decrease"},
		{"segments out of order", func(s *FairnessState) {
			g := s.Accounts[0].Sliding.Segments
			g[0].Start, g[1].Start = g[1].Start, g[0].Start
		}, "starts must increase"},
		{"segment rate mismatch", func(s *FairnessState) { s.Accounts[0].BaselineRate = Vector{5, 5} }, "differs from the baseline rate"},
		{"negative expired", func(s *FairnessState) { s.Accounts[0].Sliding.EndedExpired = -1 }, "cannot be negative"},
		{"short segment", func(s *FairnessState) { s.Accounts[0].Sliding.Segments[0].Cum = Vector{} }, "segment 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validSlidingState(t)
			c.damage(&s)
			b, err := RestoreFairnessBook(s)
			if err == nil {
				t.Fatalf("restored a damaged state")
			}
			if b != nil {
				t.Errorf("returned a book along with the error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "restore fairness book") {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func TestRestoreEmptyBook(t *testing.T) {
	for _, w := range testWindows {
		b := roundTrip(t, NewFairnessBook(w, 3))
		if b.Window() != w || b.Resources() != 3 || len(b.Accounts()) != 0 {
			t.Errorf("%v: restored empty book has window %v, %d resources, accounts %v", w, b.Window(), b.Resources(), b.Accounts())
		}
	}
}
