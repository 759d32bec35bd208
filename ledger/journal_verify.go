package ledger

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// ErrJournalCorrupt is wrapped by every error of Verify and RebuildSUBook.
var ErrJournalCorrupt = errors.New("SU journal does not verify")

// VerifyError names the first journal entry that does not verify.
type VerifyError struct {
	// Seq is the sequence number the bad entry has, or should have had at
	// its position.
	Seq uint64
	// Position is its index in the slice given to Verify.
	Position int
	// Problem says what is wrong with it.
	Problem string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("%v: entry %d (position %d): %s", ErrJournalCorrupt, e.Seq, e.Position, e.Problem)
}

// Unwrap makes errors.Is(err, ErrJournalCorrupt) hold.
func (e *VerifyError) Unwrap() error { return ErrJournalCorrupt }

// VerifyReport is what Verify recomputed from a journal.
type VerifyReport struct {
	// Entries is the number of entries that verified.
	Entries int `json:"entries"`
	// LastSeq and Head are the last good entry's Seq and Hash. Comparing
	// them with a copy kept elsewhere (SUBook.Head) is how entries cut off
	// the end of a journal are detected: a shorter chain is still a chain.
	LastSeq uint64 `json:"last_seq"`
	Head    Hash   `json:"head"`
	// At is the last good entry's time; balances are evaluated then.
	At Time `json:"at"`
	// Accounts are the research accounts' balances, sorted by name.
	Accounts []Balance `json:"accounts"`
	// Issued is every SU granted: GrantsAccount's balance is −Issued.
	Issued SU `json:"issued"`
	// Billed is every SU charged: CenterAccount's balance.
	Billed SU `json:"billed"`
	// Held is what open holds reserve in all.
	Held SU `json:"held"`
}

// Verify checks a journal using nothing but its entries: that they are
// numbered 1, 2, 3… without gaps, that each carries its predecessor's hash
// and a hash that matches its content, and that replaying every operation
// in a fresh book produces exactly that entry (so no amount, account,
// expiry or fund split was altered, even by someone who recomputed the
// hashes). Balances are then folded from the entries alone and checked
// against the replayed book. On failure the error is a *VerifyError naming
// the first bad entry, and the report covers the entries before it.
//
// Any entry that was changed, removed, inserted or moved is found, unless
// the forger also recomputed the hashes of every entry after it; such a
// rewrite is still found when the rewritten history breaks the book's rules
// (an amount, account or fund split that does not follow, a hold the
// balance could not cover). What no journal can show by itself — entries
// cut off its end, or a rule-abiding rewrite — is found by comparing the
// report's LastSeq and Head with a head kept elsewhere (SUBook.Head).
func Verify(entries []JournalEntry) (VerifyReport, error) {
	return VerifyFrom(entrySeq(entries), nil)
}

// VerifyFrom is Verify over a journal read one entry at a time, in order;
// a read error ends it, and is returned with the report of the entries
// before it. With read non-nil the journal is stored where read finds each
// entry by sequence number, and the replayed book keeps it there as it
// goes (as RebuildSUBookFrom does), so a journal of millions of entries is
// never in memory at once.
func VerifyFrom(entries iter.Seq2[JournalEntry, error], read func(seq uint64) ([]byte, error)) (VerifyReport, error) {
	fold := newJournalFold()
	book, err := replayFrom(entries, read, fold.add)
	if err != nil {
		return fold.report(), err
	}
	report := fold.report()
	for _, want := range report.Accounts {
		if got := book.Balance(want.Account, report.At); got != want {
			return report, &VerifyError{Seq: report.LastSeq, Position: report.Entries - 1,
				Problem: fmt.Sprintf("account %q: the journal's entries add up to %+v but the replayed book holds %+v", want.Account, want, got)}
		}
	}
	return report, nil
}

// entrySeq yields entries, in order.
func entrySeq(entries []JournalEntry) iter.Seq2[JournalEntry, error] {
	return func(yield func(JournalEntry, error) bool) {
		for _, e := range entries {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// RebuildSUBook rebuilds a book from its journal (the FSM does this after a
// restart or a snapshot restore), verifying the journal on the way as Verify
// does. The new book continues the chain where the journal ends.
func RebuildSUBook(entries []JournalEntry) (*SUBook, error) {
	return RebuildSUBookFrom(entrySeq(entries), nil)
}

// rebuildKeepEvery is how many entries a rebuild replays between letting
// go of them (RebuildSUBookFrom).
const rebuildKeepEvery = 1 << 14

// RebuildSUBookFrom is RebuildSUBook over a journal read one entry at a
// time, in order; a read error ends it. With read non-nil the journal is
// stored where read finds each entry by sequence number, and the book
// keeps it there (KeepJournalIn) as it goes: a rebuild of a journal of
// millions of entries then holds neither the journal nor its encoding in
// memory at once.
func RebuildSUBookFrom(entries iter.Seq2[JournalEntry, error], read func(seq uint64) ([]byte, error)) (*SUBook, error) {
	book, err := replayFrom(entries, read, nil)
	if err != nil {
		return nil, fmt.Errorf("rebuild SU book: %w", err)
	}
	return book, nil
}

// replayFrom replays entries into a fresh book, checking each
// (replayNext), and hands every entry that verified to each, if not nil.
// With read non-nil the book lets go of the entries as it goes, and at
// the end. It stops at the first entry that does not verify or cannot be
// read.
func replayFrom(entries iter.Seq2[JournalEntry, error], read func(seq uint64) ([]byte, error), each func(*JournalEntry)) (*SUBook, error) {
	book := NewSUBook()
	i := 0
	for e, err := range entries {
		if err == nil {
			err = replayNext(book, i, &e)
		}
		if err != nil {
			return nil, err
		}
		if each != nil {
			each(&e)
		}
		if i++; read != nil && i%rebuildKeepEvery == 0 {
			book.KeepJournalIn(read)
		}
	}
	if read != nil {
		book.KeepJournalIn(read)
	}
	return book, nil
}

// replayNext applies e, the journal's entry at index i, to book, which
// holds the entries before it, and checks that the book writes exactly e.
// An entry that does not verify is a *VerifyError; the book may then have
// applied it, so it is not to be used further.
func replayNext(book *SUBook, i int, e *JournalEntry) error {
	bad := func(format string, args ...any) error {
		return &VerifyError{Seq: uint64(i) + 1, Position: i, Problem: fmt.Sprintf(format, args...)}
	}
	if e.Seq != uint64(i)+1 {
		return bad("found Seq %d here: an entry before it is missing, or entries were inserted or reordered", e.Seq)
	}
	var prev Hash
	if last := book.journal.last(); last != nil {
		prev = last.Hash
	}
	if e.PrevHash != prev {
		return bad("its prev_hash %v is not the hash of the entry before it (%v): an entry was removed, inserted, reordered or changed", e.PrevHash, prev)
	}
	index, err := replayEntry(book, e)
	if err != nil {
		return bad("replaying this %v is refused (%v): the entry was altered or is out of place", e.Kind, err)
	}
	if index != i {
		return bad("this %v %q repeats entry %d, which the book would not have written twice: the entry was inserted", e.Kind, e.ID, index+1)
	}
	// The entry the book just wrote, its last.
	got := book.journal.last()
	problem := entryContentDiff(got, e)
	if problem == "" && got.Hash != e.Hash {
		problem = fmt.Sprintf("its hash %v does not match its content (%v): the entry or its hash was altered", e.Hash, got.Hash)
	}
	if problem != "" {
		return bad("%s", problem)
	}
	return nil
}

// replayEntry performs the operation e records and returns the index of
// the entry the book wrote for it (or found, for a repeat).
func replayEntry(book *SUBook, e *JournalEntry) (int, error) {
	switch e.Kind {
	case EntryGrant:
		return book.grant(e.ID, e.Account, e.Amount, e.Expires, e.Time)
	case EntryHold:
		return book.hold(e.ID, e.Account, e.Amount, e.Time)
	case EntryCharge:
		return book.charge(e.HoldID, e.ID, e.Requested, e.Detail, e.Time)
	case EntryRelease:
		return book.release(e.HoldID, e.Time)
	}
	return 0, fmt.Errorf("unknown entry kind %d", uint8(e.Kind))
}

// entryContentDiff names the first field, other than the hash, in which the
// entry the book wrote differs from the recorded one, or returns "".
func entryContentDiff(got, rec *JournalEntry) string {
	var what string
	switch {
	case got.Time != rec.Time:
		what = fmt.Sprintf("time %d, earlier than the entry before it (%d)", rec.Time, got.Time)
	case got.ID != rec.ID:
		what = fmt.Sprintf("id %q, but the operation it records has id %q", rec.ID, got.ID)
	case got.HoldID != rec.HoldID:
		what = fmt.Sprintf("hold id %q, but the operation it records has hold id %q", rec.HoldID, got.HoldID)
	case got.Account != rec.Account:
		what = fmt.Sprintf("account %q, but hold %q belongs to %q", rec.Account, rec.HoldID, got.Account)
	case got.Amount != rec.Amount:
		what = fmt.Sprintf("amount %v SU, but replaying the journal gives %v SU", rec.Amount, got.Amount)
	case got.Expires != rec.Expires:
		what = fmt.Sprintf("expiry %d, but replaying the journal gives %d", rec.Expires, got.Expires)
	case got.Requested != rec.Requested:
		what = fmt.Sprintf("requested %v SU, but replaying the journal gives %v SU", rec.Requested, got.Requested)
	case !slices.Equal(got.Funds, rec.Funds):
		what = fmt.Sprintf("funds %v, but replaying the journal draws %v", rec.Funds, got.Funds)
	case !sameChargeDetail(got.Detail, rec.Detail):
		what = "a charge detail that differs from the one replayed"
	default:
		return ""
	}
	return "it records " + what + ": the entry was altered"
}

// journalFold recomputes balances from the entries alone, independently
// of the book's own bookkeeping: grants credit accounts, holds reserve the
// funds they name, charges consume them, releases give them back. It is
// fed verified entries one at a time, in order.
type journalFold struct {
	lots     map[string]*foldLot
	accounts map[string]*Balance
	r        VerifyReport
}

type foldLot struct {
	account            string
	amount, used, held SU
	expires            Time
}

func newJournalFold() *journalFold {
	return &journalFold{lots: make(map[string]*foldLot), accounts: make(map[string]*Balance)}
}

func (f *journalFold) add(e *JournalEntry) {
	a, ok := f.accounts[e.Account]
	if !ok {
		a = &Balance{Account: e.Account}
		f.accounts[e.Account] = a
	}
	r := &f.r
	switch e.Kind {
	case EntryGrant:
		f.lots[e.ID] = &foldLot{account: e.Account, amount: e.Amount, expires: e.Expires}
		a.Granted += e.Amount
		r.Issued += e.Amount
	case EntryHold:
		a.Held += e.Amount
		r.Held += e.Amount
		for _, fund := range e.Funds {
			f.lots[fund.Grant].held += fund.Amount
		}
	case EntryCharge:
		a.Held -= e.Amount
		a.Charged += e.Amount
		r.Held -= e.Amount
		r.Billed += e.Amount
		for _, fund := range e.Funds {
			f.lots[fund.Grant].held -= fund.Amount
			f.lots[fund.Grant].used += fund.Amount
		}
	case EntryRelease:
		a.Held -= e.Amount
		r.Held -= e.Amount
		for _, fund := range e.Funds {
			f.lots[fund.Grant].held -= fund.Amount
		}
	}
	r.Entries++
	r.LastSeq, r.Head, r.At = e.Seq, e.Hash, e.Time
}

// report returns the balances of the entries added, as of the last one.
func (f *journalFold) report() VerifyReport {
	r := f.r
	accounts := make(map[string]*Balance, len(f.accounts))
	for name, a := range f.accounts {
		b := *a
		accounts[name] = &b
	}
	for _, l := range f.lots {
		free := l.amount - l.used - l.held
		if l.expires != 0 && r.At >= l.expires {
			accounts[l.account].Expired += free
		} else {
			accounts[l.account].Available += free
		}
	}
	r.Accounts = make([]Balance, 0, len(accounts))
	for _, a := range accounts {
		r.Accounts = append(r.Accounts, *a)
	}
	slices.SortFunc(r.Accounts, func(x, y Balance) int { return strings.Compare(x.Account, y.Account) })
	return r
}
