package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// refBook is an independent, deliberately naive model of the SU book's
// rules, written from the specification: it recomputes everything from
// plain maps and sorts on every call, with no incremental bookkeeping.
type refBook struct {
	grants  []*refGrant
	holds   map[string]*refHold
	open    map[string]*refHold // holds not yet released
	charges map[string]bool
	last    Time
}

type refGrant struct {
	id, account string
	amount      SU
	expires     Time
	order       int
	consumed    SU
}

type refHold struct {
	account  string
	amount   SU
	charged  SU
	reserved map[string]SU // grant id → SU still reserved
	released bool
}

func newRefBook() *refBook {
	return &refBook{holds: map[string]*refHold{}, open: map[string]*refHold{}, charges: map[string]bool{}}
}

func (r *refBook) clamp(at Time) Time { r.last = max(r.last, at); return r.last }

// spendOrder lists an account's grants earliest expiry first, never-expiring
// last, in grant order among equals.
func (r *refBook) spendOrder(account string) []*refGrant {
	var gs []*refGrant
	for _, g := range r.grants {
		if g.account == account {
			gs = append(gs, g)
		}
	}
	key := func(g *refGrant) (bool, Time, int) { return g.expires == 0, g.expires, g.order }
	slices.SortFunc(gs, func(a, b *refGrant) int {
		an, ae, ao := key(a)
		bn, be, bo := key(b)
		if an != bn {
			if an {
				return 1
			}
			return -1
		}
		if ae != be {
			return int(ae - be)
		}
		return ao - bo
	})
	return gs
}

func (r *refBook) reservedOf(g *refGrant) SU {
	var sum SU
	for _, h := range r.open {
		sum += h.reserved[g.id]
	}
	return sum
}

func (r *refBook) free(g *refGrant) SU { return g.amount - g.consumed - r.reservedOf(g) }

// reservedByGrant sums what open holds reserve of each grant.
func (r *refBook) reservedByGrant() map[string]SU {
	reserved := map[string]SU{}
	for _, h := range r.open {
		for id, amount := range h.reserved {
			reserved[id] += amount
		}
	}
	return reserved
}

func (r *refBook) balance(account string, at Time) Balance {
	return r.balanceWith(account, at, r.reservedByGrant())
}

func (r *refBook) balanceWith(account string, at Time, reserved map[string]SU) Balance {
	b := Balance{Account: account}
	for _, g := range r.grants {
		if g.account != account {
			continue
		}
		free := g.amount - g.consumed - reserved[g.id]
		b.Granted += g.amount
		b.Charged += g.consumed
		if g.expires != 0 && at >= g.expires {
			b.Expired += free
		} else {
			b.Available += free
		}
	}
	for _, h := range r.open {
		if h.account == account {
			b.Held += h.amount - h.charged
		}
	}
	return b
}

func (r *refBook) grant(id, account string, amount SU, expires, at Time) {
	r.clamp(at)
	r.grants = append(r.grants, &refGrant{id: id, account: account, amount: amount, expires: expires, order: len(r.grants)})
}

// hold returns false when the account cannot cover amount.
func (r *refBook) hold(id, account string, amount SU, at Time) bool {
	at = max(r.last, at) // a refused hold writes nothing, not even its time
	if amount > r.balance(account, at).Available {
		return false
	}
	r.last = at
	h := &refHold{account: account, amount: amount, reserved: map[string]SU{}}
	for _, g := range r.spendOrder(account) {
		if g.expires != 0 && at >= g.expires {
			continue
		}
		take := min(amount, r.free(g))
		h.reserved[g.id] += take
		amount -= take
	}
	r.holds[id] = h
	r.open[id] = h
	return true
}

// charge returns the amount posted.
func (r *refBook) charge(holdID, chargeID string, amount SU, at Time) SU {
	r.clamp(at)
	h := r.holds[holdID]
	posted := min(amount, h.amount-h.charged)
	rest := posted
	for _, g := range r.spendOrder(h.account) {
		take := min(rest, h.reserved[g.id])
		h.reserved[g.id] -= take
		if h.reserved[g.id] == 0 {
			delete(h.reserved, g.id)
		}
		g.consumed += take
		rest -= take
	}
	h.charged += posted
	r.charges[chargeID] = true
	return posted
}

func (r *refBook) release(holdID string, at Time) SU {
	r.clamp(at)
	h := r.holds[holdID]
	h.released = true
	h.reserved = map[string]SU{}
	delete(r.open, holdID)
	return h.amount - h.charged
}

// suOp is one randomly generated operation; do runs it on the book.
type suOp struct {
	kind                EntryKind
	id, hold, account   string
	amount              SU
	expires, at         Time
	detail              ChargeDetail
	repeat, conflicting bool
}

func (o suOp) do(b *SUBook) ([]JournalEntry, error) {
	switch o.kind {
	case EntryGrant:
		return b.Grant(o.id, o.account, o.amount, o.expires, o.at)
	case EntryHold:
		return b.Hold(o.id, o.account, o.amount, o.at)
	case EntryCharge:
		return b.Charge(o.hold, o.id, o.amount, o.detail, o.at)
	default:
		return b.Release(o.hold, o.at)
	}
}

// suScenario drives a book and the reference model with the same random
// operations and checks them against each other after every step.
type suScenario struct {
	t        testing.TB
	rng      *rand.Rand
	book     *SUBook
	ref      *refBook
	now      Time
	accounts []string
	holds    []string
	done     []suOp           // operations that succeeded, for repeats
	results  [][]JournalEntry // what each of them returned
	nextID   int
}

func (s *suScenario) newID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s%d", prefix, s.nextID)
}

func (s *suScenario) randomOp() suOp {
	rng := s.rng
	s.now += Time(rng.IntN(20))
	at := s.now
	if rng.IntN(10) == 0 {
		at -= Time(rng.IntN(50)) // a late command: the book clamps it
	}
	acct := s.accounts[rng.IntN(len(s.accounts))]
	switch p := rng.IntN(100); {
	case p < 12:
		var expires Time
		if rng.IntN(2) == 0 {
			expires = s.now + 1 + Time(rng.IntN(400))
		}
		return suOp{kind: EntryGrant, id: s.newID("g"), account: acct, amount: 1 + SU(rng.Int64N(int64(wholeSU(100)))), expires: expires, at: at}
	case p < 40:
		amount := SU(rng.Int64N(int64(wholeSU(80))))
		if rng.IntN(10) == 0 {
			amount = 0
		}
		op := suOp{kind: EntryHold, id: s.newID("job"), account: acct, amount: amount, at: at}
		return op
	case p < 70:
		if len(s.holds) == 0 {
			return suOp{kind: EntryCharge, hold: "missing", id: s.newID("c"), at: at}
		}
		op := suOp{kind: EntryCharge, hold: s.holds[rng.IntN(len(s.holds))], id: s.newID("c"), at: at}
		if rng.IntN(2) == 0 {
			op.detail = ChargeDetail{
				Runtime: time.Duration(rng.Int64N(int64(10 * time.Hour))),
				Demand:  Vector{float64(1 + rng.IntN(16)), rng.Float64() * (1 << 35)},
				Weights: BillingWeights{rng.Float64() * 2, rng.Float64() / (1 << 30)},
			}
			cost, err := Cost(op.detail.Runtime, op.detail.Demand, op.detail.Weights, BillingSum)
			if err != nil {
				s.t.Fatal(err)
			}
			op.amount = cost
		} else {
			op.amount = SU(rng.Int64N(int64(wholeSU(30))))
		}
		return op
	case p < 82:
		if len(s.holds) == 0 {
			return suOp{kind: EntryRelease, hold: "missing", at: at}
		}
		return suOp{kind: EntryRelease, hold: s.holds[rng.IntN(len(s.holds))], at: at}
	case p < 94 && len(s.done) > 0:
		i := rng.IntN(len(s.done))
		op := s.done[i]
		op.at, op.repeat = at, true
		op.detail = op.detail.Clone()
		return op
	case len(s.done) > 0:
		op := s.done[rng.IntN(len(s.done))]
		if op.kind == EntryRelease {
			return op // a release has nothing to conflict on; a plain repeat
		}
		op.amount++
		op.at, op.conflicting, op.detail = at, true, ChargeDetail{}
		return op
	}
	return suOp{kind: EntryGrant, id: s.newID("g"), account: acct, amount: wholeSU(10), at: at}
}

// step runs one operation on both and compares.
func (s *suScenario) step(op suOp) {
	t := s.t
	before := s.book.Len()
	entries, err := op.do(s.book)
	switch {
	case op.conflicting:
		if !errors.Is(err, ErrIDConflict) {
			t.Fatalf("%+v: %v, want ErrIDConflict", op, err)
		}
	case op.repeat:
		if err != nil {
			t.Fatalf("repeat %+v: %v", op, err)
		}
		want := s.results[slices.IndexFunc(s.done, func(d suOp) bool { return d.kind == op.kind && d.id == op.id && d.hold == op.hold })]
		if !reflect.DeepEqual(entries, want) {
			t.Fatalf("repeat %+v returned %+v, want the original %+v", op, entries, want)
		}
	default:
		if !s.checkAgainstModel(op, entries, err) {
			op.repeat = true
		}
	}
	if op.repeat || err != nil {
		if s.book.Len() != before {
			t.Fatalf("%+v (repeat %v, error %v) wrote to the journal", op, op.repeat, err)
		}
	} else {
		s.done = append(s.done, op)
		s.results = append(s.results, entries)
	}
	s.checkBalances()
}

// checkAgainstModel reports whether the operation should have written an
// entry (false for a release of a hold already released).
func (s *suScenario) checkAgainstModel(op suOp, entries []JournalEntry, err error) bool {
	t := s.t
	switch op.kind {
	case EntryGrant:
		if err != nil {
			t.Fatalf("%+v: %v", op, err)
		}
		s.ref.grant(op.id, op.account, op.amount, op.expires, op.at)
	case EntryHold:
		if ok := s.ref.hold(op.id, op.account, op.amount, op.at); ok != (err == nil) {
			t.Fatalf("%+v: book says %v, model says covered=%v", op, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInsufficientFunds) {
			t.Fatalf("%+v: %v, want ErrInsufficientFunds", op, err)
		}
		if err == nil {
			s.holds = append(s.holds, op.id)
		}
	case EntryCharge:
		h, ok := s.ref.holds[op.hold]
		switch {
		case !ok:
			if !errors.Is(err, ErrUnknownHold) {
				t.Fatalf("%+v: %v, want ErrUnknownHold", op, err)
			}
		case h.released:
			if !errors.Is(err, ErrHoldClosed) {
				t.Fatalf("%+v: %v, want ErrHoldClosed", op, err)
			}
		default:
			if err != nil {
				t.Fatalf("%+v: %v", op, err)
			}
			if posted := s.ref.charge(op.hold, op.id, op.amount, op.at); entries[0].Amount != posted {
				t.Fatalf("%+v posted %v, model posts %v", op, entries[0].Amount, posted)
			}
		}
	case EntryRelease:
		h, ok := s.ref.holds[op.hold]
		switch {
		case !ok:
			if !errors.Is(err, ErrUnknownHold) {
				t.Fatalf("%+v: %v, want ErrUnknownHold", op, err)
			}
		case h.released:
			// A second release is a repeat of the first.
			if err != nil {
				t.Fatalf("%+v: %v", op, err)
			}
			return false
		default:
			if err != nil {
				t.Fatalf("%+v: %v", op, err)
			}
			if voided := s.ref.release(op.hold, op.at); entries[0].Amount != voided {
				t.Fatalf("%+v voided %v, model voids %v", op, entries[0].Amount, voided)
			}
		}
	}
	return true
}

// checkBalances compares every account's balance, now and later, with the
// model and with a plain sum over the journal, and checks the invariants.
func (s *suScenario) checkBalances() {
	t := s.t
	reserved := s.ref.reservedByGrant()
	for _, acct := range s.accounts {
		for _, at := range []Time{s.now, s.now + 200, s.now + 1000} {
			got, want := s.book.Balance(acct, at), s.ref.balanceWith(acct, at, reserved)
			if got != want {
				t.Fatalf("balance of %s at %d: book %+v, model %+v", acct, at, got, want)
			}
			if got.Available < 0 || got.Expired < 0 || got.Held < 0 || got.Charged < 0 {
				t.Fatalf("negative part in %+v", got)
			}
			if got.Granted != got.Charged+got.Held+got.Expired+got.Available {
				t.Fatalf("parts of %+v do not add up to Granted", got)
			}
		}
	}
	if s.book.Len()%25 == 0 {
		s.checkJournalSums()
	}
}

// checkJournalSums checks that every balance is the plain sum of the
// account's journal entries.
func (s *suScenario) checkJournalSums() {
	t := s.t
	journal := mustRead(s.book.Journal())
	sums := map[string]*Balance{}
	for _, e := range journal {
		b := sums[e.Account]
		if b == nil {
			b = &Balance{}
			sums[e.Account] = b
		}
		switch e.Kind {
		case EntryGrant:
			b.Granted += e.Amount
		case EntryHold:
			b.Held += e.Amount
		case EntryCharge:
			b.Held -= e.Amount
			b.Charged += e.Amount
		case EntryRelease:
			b.Held -= e.Amount
		}
	}
	for _, acct := range s.accounts {
		var sum Balance
		if p := sums[acct]; p != nil {
			sum = *p
		}
		got := s.book.Balance(acct, s.now)
		if got.Granted != sum.Granted || got.Charged != sum.Charged || got.Held != sum.Held {
			t.Fatalf("balance of %s %+v differs from the sum of its journal entries %+v", acct, got, sum)
		}
	}
}

func runSUScenario(t testing.TB, seed uint64, steps int) *SUBook {
	s := &suScenario{
		t: t, rng: rand.New(rand.NewPCG(seed, 99)), book: NewSUBook(), ref: newRefBook(),
		accounts: []string{"astro", "bio", "chem", "dyn"},
	}
	for range steps {
		s.step(s.randomOp())
	}
	s.checkJournalSums()
	return s.book
}

func TestSUBookAgreesWithModelOnRandomOperations(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			book := runSUScenario(t, seed, 600)
			journal := mustRead(book.Journal())
			report, err := Verify(journal)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range report.Accounts {
				if got := book.Balance(b.Account, report.At); got != b {
					t.Fatalf("Verify reports %+v, the book %+v", b, got)
				}
			}
			rebuilt, err := RebuildSUBook(journal)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mustRead(rebuilt.Journal()), journal) {
				t.Fatal("the rebuilt book's journal differs")
			}
			// The rebuilt book continues exactly like the original.
			for i, b := range []*SUBook{book, rebuilt} {
				if _, err := b.Grant("after", "astro", wholeSU(5), 0, report.At+1); err != nil {
					t.Fatal(i, err)
				}
				if _, err := b.Hold("after-job", "astro", wholeSU(5), report.At+2); err != nil {
					t.Fatal(i, err)
				}
			}
			if a, b := mustRead(book.Journal()), mustRead(rebuilt.Journal()); !reflect.DeepEqual(a, b) {
				t.Fatal("the rebuilt book continued differently")
			}
		})
	}
}

func TestSameOperationsGiveByteIdenticalJournals(t *testing.T) {
	encode := func(b *SUBook) []byte {
		var out []byte
		for _, e := range mustRead(b.Journal()) {
			data, err := e.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, data...)
		}
		return out
	}
	a, b := encode(runSUScenario(t, 42, 400)), encode(runSUScenario(t, 42, 400))
	if !bytes.Equal(a, b) {
		t.Fatal("two books fed the same operations wrote different journals")
	}
	if c := encode(runSUScenario(t, 43, 400)); bytes.Equal(a, c) {
		t.Fatal("different operations wrote the same journal: the comparison cannot fail")
	}
}
