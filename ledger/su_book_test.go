package ledger

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wholeSU is shorthand for whole SU in tests.
func wholeSU(n int64) SU { return SU(n) * MicroPerSU }

// okEntry returns a helper that fails the test when an operation that
// should succeed fails, and otherwise returns its one entry.
func okEntry(t *testing.T) func([]JournalEntry, error) JournalEntry {
	return func(entries []JournalEntry, err error) JournalEntry {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("operation returned %d entries, want 1", len(entries))
		}
		return entries[0]
	}
}

func wantSUBalance(t *testing.T, b *SUBook, account string, at Time, want Balance) {
	t.Helper()
	want.Account = account
	if got := b.Balance(account, at); got != want {
		t.Fatalf("balance of %s at %d = %+v, want %+v", account, at, got, want)
	}
}

func TestHoldChargeReleaseLifecycle(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g1", "chem", wholeSU(100), 0, 10))
	wantSUBalance(t, b, "chem", 10, Balance{Granted: wholeSU(100), Available: wholeSU(100)})

	hold := must(b.Hold("job1", "chem", wholeSU(60), 20))
	if hold.Kind != EntryHold || hold.Amount != wholeSU(60) || !reflect.DeepEqual(hold.Funds, []Fund{{"g1", wholeSU(60)}}) {
		t.Fatalf("hold entry = %+v", hold)
	}
	wantSUBalance(t, b, "chem", 20, Balance{Granted: wholeSU(100), Held: wholeSU(60), Available: wholeSU(40)})

	detail := ChargeDetail{Runtime: 2 * time.Hour, Demand: Vector{8}, Weights: BillingWeights{1.25}, Resources: []string{"cpu"}}
	charge := must(b.Charge("job1", "job1.0#1", wholeSU(20), detail, 30))
	if charge.Amount != wholeSU(20) || charge.Requested != wholeSU(20) || charge.Account != "chem" || charge.HoldID != "job1" {
		t.Fatalf("charge entry = %+v", charge)
	}
	if d, c := charge.Transfer(); d != "chem" || c != CenterAccount {
		t.Fatalf("charge transfers %s → %s, want chem → %s", d, c, CenterAccount)
	}
	wantSUBalance(t, b, "chem", 30, Balance{Granted: wholeSU(100), Charged: wholeSU(20), Held: wholeSU(40), Available: wholeSU(40)})

	release := must(b.Release("job1", 40))
	if release.Amount != wholeSU(40) {
		t.Fatalf("release voided %v, want the 40 SU left of the hold", release.Amount)
	}
	wantSUBalance(t, b, "chem", 40, Balance{Granted: wholeSU(100), Charged: wholeSU(20), Available: wholeSU(80)})
	if s, _ := b.HoldState("job1"); !s.Released || s.Charged != wholeSU(20) || s.Voided != wholeSU(40) || s.Remaining != 0 {
		t.Fatalf("hold state after release = %+v", s)
	}
	if _, err := b.Charge("job1", "job1.1#1", 0, ChargeDetail{}, 50); !errors.Is(err, ErrHoldClosed) {
		t.Fatalf("charge after release: %v, want ErrHoldClosed", err)
	}
}

func TestHoldRefusedWithTheNumbers(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g1", "bio", wholeSU(100), 0, 0))
	must(b.Hold("j1", "bio", wholeSU(70), 1))
	must(b.Charge("j1", "c1", wholeSU(10), ChargeDetail{}, 2))
	before := mustRead(b.Journal())

	_, err := b.Hold("j2", "bio", wholeSU(31), 3)
	var ife *InsufficientFundsError
	if !errors.Is(err, ErrInsufficientFunds) || !errors.As(err, &ife) {
		t.Fatalf("hold beyond the balance: %v, want an *InsufficientFundsError", err)
	}
	if ife.Cost != wholeSU(31) || ife.Balance.Available != wholeSU(30) || ife.Balance.Held != wholeSU(60) || ife.Balance.Charged != wholeSU(10) {
		t.Fatalf("refusal carries %+v", ife)
	}
	for _, s := range []string{`"bio"`, "31 SU", "available 30 SU", "granted 100", "charged 10", "held by open jobs 60", "ask an admin for a grant or submit fewer tasks"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not mention %q", err, s)
		}
	}
	if !reflect.DeepEqual(mustRead(b.Journal()), before) {
		t.Fatal("a refused hold changed the journal")
	}
	// Exactly what is available can be held.
	must(b.Hold("j2", "bio", wholeSU(30), 4))
	if _, err := b.Hold("j3", "nobody", 1, 5); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("hold on an account without grants: %v", err)
	}
	// A job that costs nothing needs no SU.
	must(b.Hold("free", "nobody", 0, 5))
}

func TestDuplicatesReturnTheOriginalAndWriteNothing(t *testing.T) {
	b := NewSUBook()
	detail := ChargeDetail{Runtime: time.Hour, Demand: Vector{2}, Weights: BillingWeights{3}}
	ops := []func() ([]JournalEntry, error){
		func() ([]JournalEntry, error) { return b.Grant("g", "a", wholeSU(50), 1000, 1) },
		func() ([]JournalEntry, error) { return b.Hold("h", "a", wholeSU(20), 2) },
		func() ([]JournalEntry, error) { return b.Charge("h", "c", wholeSU(6), detail, 3) },
		func() ([]JournalEntry, error) { return b.Release("h", 4) },
	}
	var first [][]JournalEntry
	for _, op := range ops {
		e, err := op()
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, e)
	}
	journal := mustRead(b.Journal())
	balance := b.Balance("a", 5)
	// Repeat every operation, later and in another order: same answers,
	// nothing written, nothing charged twice.
	for i := len(ops) - 1; i >= 0; i-- {
		again, err := ops[i]()
		if err != nil {
			t.Fatalf("repeat of operation %d: %v", i, err)
		}
		if !reflect.DeepEqual(again, first[i]) {
			t.Fatalf("repeat of operation %d returned %+v, want the original %+v", i, again, first[i])
		}
	}
	if !reflect.DeepEqual(mustRead(b.Journal()), journal) || b.Balance("a", 5) != balance {
		t.Fatal("repeated operations changed the book")
	}
	if balance.Charged != wholeSU(6) {
		t.Fatalf("charged %v, want 6 SU once", balance.Charged)
	}
}

func TestSameIDDifferentContentIsAConflict(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g", "a", wholeSU(50), 0, 1))
	must(b.Hold("h", "a", wholeSU(20), 2))
	must(b.Charge("h", "c", wholeSU(5), ChargeDetail{}, 3))
	must(b.Hold("h2", "a", wholeSU(1), 3))
	journal := mustRead(b.Journal())
	conflicts := map[string]func() ([]JournalEntry, error){
		"grant amount":   func() ([]JournalEntry, error) { return b.Grant("g", "a", wholeSU(51), 0, 4) },
		"grant account":  func() ([]JournalEntry, error) { return b.Grant("g", "b", wholeSU(50), 0, 4) },
		"grant expiry":   func() ([]JournalEntry, error) { return b.Grant("g", "a", wholeSU(50), 99, 4) },
		"hold amount":    func() ([]JournalEntry, error) { return b.Hold("h", "a", wholeSU(21), 4) },
		"hold account":   func() ([]JournalEntry, error) { return b.Hold("h", "b", wholeSU(20), 4) },
		"charge amount":  func() ([]JournalEntry, error) { return b.Charge("h", "c", wholeSU(4), ChargeDetail{}, 4) },
		"charge hold":    func() ([]JournalEntry, error) { return b.Charge("h2", "c", wholeSU(5), ChargeDetail{}, 4) },
		"charge details": func() ([]JournalEntry, error) { return b.Charge("h", "c", 0, ChargeDetail{Runtime: 1}, 4) },
	}
	for name, op := range conflicts {
		_, err := op()
		if !errors.Is(err, ErrIDConflict) || !strings.Contains(err.Error(), "new") {
			t.Errorf("%s: error %v; want ErrIDConflict telling to use a new id", name, err)
		}
	}
	if !reflect.DeepEqual(mustRead(b.Journal()), journal) {
		t.Fatal("a conflicting operation changed the journal")
	}
}

func TestChargeIsCappedAtTheHold(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g", "a", wholeSU(100), 0, 0))
	must(b.Hold("h", "a", wholeSU(10), 1))
	must(b.Charge("h", "t1", wholeSU(7), ChargeDetail{}, 2))
	e := must(b.Charge("h", "t2", wholeSU(7), ChargeDetail{}, 3))
	if e.Requested != wholeSU(7) || e.Amount != wholeSU(3) {
		t.Fatalf("over-hold charge requested %v posted %v; want 7 asked, 3 posted", e.Requested, e.Amount)
	}
	e = must(b.Charge("h", "t3", wholeSU(1), ChargeDetail{}, 4))
	if e.Amount != 0 {
		t.Fatalf("charge against an exhausted hold posted %v, want 0", e.Amount)
	}
	if r := must(b.Release("h", 5)); r.Amount != 0 {
		t.Fatalf("release of an exhausted hold voided %v", r.Amount)
	}
	wantSUBalance(t, b, "a", 5, Balance{Granted: wholeSU(100), Charged: wholeSU(10), Available: wholeSU(90)})
}

func TestExpiredGrantsStopCoveringNewHoldsOnly(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("old", "a", wholeSU(40), 100, 0)) // expires at 100
	must(b.Grant("new", "a", wholeSU(30), 200, 0)) // expires at 200
	must(b.Grant("forever", "a", wholeSU(20), 0, 0))

	// Earliest expiry is spent first.
	h := must(b.Hold("j1", "a", wholeSU(50), 50))
	if !reflect.DeepEqual(h.Funds, []Fund{{"old", wholeSU(40)}, {"new", wholeSU(10)}}) {
		t.Fatalf("hold reserved %v, want old first then new", h.Funds)
	}
	wantSUBalance(t, b, "a", 99, Balance{Granted: wholeSU(90), Held: wholeSU(50), Available: wholeSU(40)})
	// At the expiry instant "old" no longer covers anything new; all of it
	// is reserved, so nothing is lost.
	wantSUBalance(t, b, "a", 100, Balance{Granted: wholeSU(90), Held: wholeSU(50), Available: wholeSU(40)})

	// The hold placed before the expiry stays valid: charges still draw on
	// the expired grant it reserved.
	c := must(b.Charge("j1", "t1", wholeSU(45), ChargeDetail{}, 150))
	if !reflect.DeepEqual(c.Funds, []Fund{{"old", wholeSU(40)}, {"new", wholeSU(5)}}) {
		t.Fatalf("charge drew %v", c.Funds)
	}
	// What goes back to an expired grant is expired; to a live one, available.
	must(b.Release("j1", 160))
	wantSUBalance(t, b, "a", 160, Balance{Granted: wholeSU(90), Charged: wholeSU(45), Available: wholeSU(45)})

	if _, err := b.Hold("j2", "a", wholeSU(46), 170); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("hold above the unexpired rest: %v", err)
	}
	must(b.Hold("j2", "a", wholeSU(30), 170))
	must(b.Release("j2", 180))
	// After "new" expires its free 25 SU are expired, "forever" still counts.
	wantSUBalance(t, b, "a", 250, Balance{Granted: wholeSU(90), Charged: wholeSU(45), Expired: wholeSU(25), Available: wholeSU(20)})
	if _, err := b.Hold("j3", "a", wholeSU(21), 250); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("expired grant covered a new hold: %v", err)
	} else if !strings.Contains(err.Error(), "expired 25") {
		t.Fatalf("refusal %q does not show the expired SU", err)
	}
	// Grant balances never decay: a grant without expiry is worth its
	// amount forever.
	wantSUBalance(t, b, "a", 1<<62, Balance{Granted: wholeSU(90), Charged: wholeSU(45), Expired: wholeSU(25), Available: wholeSU(20)})

	grants := b.Grants("a", 250)
	if len(grants) != 3 || grants[0].ID != "old" || grants[2].ID != "forever" || !grants[1].Expired || grants[2].Expired {
		t.Fatalf("grants = %+v", grants)
	}
}

func TestTimesNeverGoBackwards(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g", "a", wholeSU(10), 0, 100))
	e := must(b.Hold("h", "a", wholeSU(1), 50))
	if e.Time != 100 {
		t.Fatalf("hold at 50 after an entry at 100 was journaled at %d, want 100", e.Time)
	}
	// Expiry is judged at the clamped time: a grant expiring at 80 is in
	// the past.
	if _, err := b.Grant("g2", "a", wholeSU(1), 80, 60); !errors.Is(err, ErrBadSUArgument) {
		t.Fatalf("grant already expired: %v", err)
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g", "a", wholeSU(10), 0, 0))
	must(b.Hold("h", "a", wholeSU(5), 1))
	journal := mustRead(b.Journal())
	long := strings.Repeat("x", 300)
	detail := ChargeDetail{Runtime: time.Hour, Demand: Vector{1}, Weights: BillingWeights{2}}
	cases := []struct {
		name string
		err  error
		op   func() ([]JournalEntry, error)
	}{
		{"empty grant id", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("", "a", 1, 0, 2) }},
		{"long grant id", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant(long, "a", 1, 0, 2) }},
		{"bad UTF-8 account", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("g2", "\xff", 1, 0, 2) }},
		{"reserved account", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("g2", CenterAccount, 1, 0, 2) }},
		{"zero grant", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("g2", "a", 0, 0, 2) }},
		{"negative grant", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("g2", "a", -1, 0, 2) }},
		{"grant overflow", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Grant("g2", "b", MaxSU, 0, 2) }},
		{"negative hold", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Hold("h2", "a", -1, 2) }},
		{"empty hold account", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Hold("h2", "", 1, 2) }},
		{"negative charge", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Charge("h", "c", -1, ChargeDetail{}, 2) }},
		{"charge not matching its detail", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Charge("h", "c", wholeSU(3), detail, 2) }},
		{"charge detail with bad demand", ErrBadSUArgument, func() ([]JournalEntry, error) {
			return b.Charge("h", "c", 0, ChargeDetail{Runtime: 1, Demand: Vector{-1}, Weights: BillingWeights{1}}, 2)
		}},
		{"charge detail naming too few resources", ErrBadSUArgument, func() ([]JournalEntry, error) {
			return b.Charge("h", "c", wholeSU(2), ChargeDetail{Runtime: time.Hour, Demand: Vector{1}, Weights: BillingWeights{2}, Resources: []string{"cpu", "mem"}}, 2)
		}},
		{"charge unknown hold", ErrUnknownHold, func() ([]JournalEntry, error) { return b.Charge("nope", "c", 1, ChargeDetail{}, 2) }},
		{"release unknown hold", ErrUnknownHold, func() ([]JournalEntry, error) { return b.Release("nope", 2) }},
		{"release empty id", ErrBadSUArgument, func() ([]JournalEntry, error) { return b.Release("", 2) }},
	}
	for _, c := range cases {
		entries, err := c.op()
		if !errors.Is(err, c.err) || entries != nil {
			t.Errorf("%s: %v, %v; want %v", c.name, entries, err, c.err)
		}
	}
	if !reflect.DeepEqual(mustRead(b.Journal()), journal) {
		t.Fatal("a bad request changed the journal")
	}
	wantSUBalance(t, b, "a", 2, Balance{Granted: wholeSU(10), Held: wholeSU(5), Available: wholeSU(5)})
	// The well-formed version of the mismatching charge goes through.
	must(b.Charge("h", "c", wholeSU(2), detail, 2))
}

func TestReturnedEntriesShareNothingWithTheBook(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	must(b.Grant("g", "a", wholeSU(10), 0, 0))
	must(b.Hold("h", "a", wholeSU(5), 1))
	detail := ChargeDetail{Runtime: time.Hour, Demand: Vector{1}, Weights: BillingWeights{2}, Resources: []string{"cpu"}}
	e := must(b.Charge("h", "c", wholeSU(2), detail, 2))
	detail.Demand[0], detail.Weights[0], detail.Resources[0] = 99, 99, "gpu"
	e.Funds[0].Amount, e.Detail.Demand[0] = 1, 42
	for _, j := range [][]JournalEntry{mustRead(b.Journal()), mustRead(b.JournalFrom(3, 1))} {
		j[len(j)-1].Detail.Weights[0] = 7
	}
	if _, err := Verify(mustRead(b.Journal())); err != nil {
		t.Fatalf("mutating returned entries or the caller's detail reached the book: %v", err)
	}
	if again := must(b.Charge("h", "c", wholeSU(2), ChargeDetail{Runtime: time.Hour, Demand: Vector{1}, Weights: BillingWeights{2}, Resources: []string{"cpu"}}, 3)); again.Seq != 3 {
		t.Fatalf("repeat of the charge got Seq %d, want the original 3", again.Seq)
	}
}

func TestJournalPaging(t *testing.T) {
	must := okEntry(t)
	b := NewSUBook()
	for i := range 10 {
		must(b.Grant(string(rune('a'+i)), "x", wholeSU(1), 0, Time(i)))
	}
	page := mustRead(b.JournalFrom(4, 3))
	if len(page) != 3 || page[0].Seq != 4 || page[2].Seq != 6 {
		t.Fatalf("page from 4 of 3 = %d entries starting %d", len(page), page[0].Seq)
	}
	if n := len(mustRead(b.JournalFrom(9, 100))); n != 2 {
		t.Fatalf("page past the end has %d entries, want 2", n)
	}
	if n := len(mustRead(b.JournalFrom(0, 1<<62))); n != 10 {
		t.Fatalf("page from 0 has %d entries, want 10", n)
	}
	if n := len(mustRead(b.JournalFrom(11, 5))) + len(mustRead(b.JournalFrom(1, -1))); n != 0 {
		t.Fatalf("empty pages have %d entries", n)
	}
	if seq, h := b.Head(); seq != 10 || h != mustRead(b.Journal())[9].Hash {
		t.Fatalf("head = %d %v", seq, h)
	}
	if got := b.Accounts(); !reflect.DeepEqual(got, []string{"x"}) {
		t.Fatalf("accounts = %v", got)
	}
}
