package ledger

import (
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJournalStoreReadsBackEveryEntry writes enough entries, of every kind
// and of varying sizes, to cross both the store's byte chunks and its span
// chunks, and reads each back: as the operation returned it, as a page of
// the journal, and through a replay that checks the hash chain.
func TestJournalStoreReadsBackEveryEntry(t *testing.T) {
	book := NewSUBook()
	var written []JournalEntry
	keep := func(entries []JournalEntry, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, entries...)
	}
	at := Time(1)
	keep(book.Grant("g", "acct", 1e15, 0, at))
	resources := []string{"cpu", "mem", "gpu"}
	for i := 0; book.journal.len() < journalSpanChunk+100 || len(book.journal.chunks) < 3; i++ {
		at++
		hold := fmt.Sprintf("job-%d-%s", i, string(make([]byte, i%40)))
		keep(book.Hold(hold, "acct", 1000, at))
		detail := ChargeDetail{Runtime: time.Duration(i) * time.Second, Resources: resources[:1+i%3],
			Demand: []float64{1, 2, 3}[:1+i%3], Weights: []float64{0.5, 0.25, 1}[:1+i%3]}
		detail.Rule = BillingSum
		cost, err := Cost(detail.Runtime, detail.Demand, detail.Weights, detail.Rule)
		if err != nil {
			t.Fatal(err)
		}
		keep(book.Charge(hold, hold+"/0", cost, detail, at))
		keep(book.Release(hold, at))
	}
	if got := book.Len(); got != len(written) {
		t.Fatalf("the book holds %d entries, the operations returned %d", got, len(written))
	}
	journal := mustRead(book.Journal())
	for i := range written {
		if !reflect.DeepEqual(journal[i], written[i]) {
			t.Fatalf("entry %d reads back as %+v, was written as %+v", i+1, journal[i], written[i])
		}
	}
	// A retry answers with the original entry, wherever it lies.
	again, err := book.Hold("job-0-", "acct", 1000, at)
	if err != nil || !reflect.DeepEqual(again[0], written[1]) {
		t.Fatalf("a retried hold answers %+v, %v; want the original %+v", again, err, written[1])
	}
	if _, err := Verify(journal); err != nil {
		t.Fatalf("the journal read back does not verify: %v", err)
	}
	seq, head := book.Head()
	if last := written[len(written)-1]; seq != last.Seq || head != last.Hash {
		t.Fatalf("head %d %v, want the last entry's %d %v", seq, head, last.Seq, last.Hash)
	}
}

// TestFNV1aIsHashFNVs: the book's charge index hashes as hash/fnv does.
func TestFNV1aIsHashFNVs(t *testing.T) {
	for _, id := range []string{"", "j1/0/1", "job-12345/17/3", "é"} {
		h := fnv.New64a()
		h.Write([]byte(id))
		if got, want := fnv1a(id), h.Sum64(); got != want {
			t.Errorf("fnv1a(%q) = %#x, FNV-1a says %#x", id, got, want)
		}
	}
}

// TestChargeIdsWhoseHashesClash: a charge id whose hash an earlier id took
// is still a new charge, and a retry of either finds its own entry.
func TestChargeIdsWhoseHashesClash(t *testing.T) {
	book := NewSUBook()
	book.chargeKey = func(string) uint64 { return 1 } // every id clashes
	if _, err := book.Grant("g", "acct", 1e12, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := book.Hold("h", "acct", 1e9, 2); err != nil {
		t.Fatal(err)
	}
	a, err := book.Charge("h", "a", 10, ChargeDetail{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := book.Charge("h", "b", 20, ChargeDetail{}, 4)
	if err != nil {
		t.Fatalf("a charge whose id's hash clashes with another's: %v", err)
	}
	if b[0].Seq == a[0].Seq || b[0].ID != "b" || b[0].Amount != 20 {
		t.Fatalf("the clashing charge answered %+v; want a new entry of its own", b[0])
	}
	for _, want := range []JournalEntry{a[0], b[0]} {
		got, err := book.Charge("h", want.ID, want.Requested, ChargeDetail{}, 5)
		if err != nil || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("retrying charge %q answered %+v, %v; want its entry %+v", want.ID, got, err, want)
		}
	}
	if _, err := book.Charge("h", "b", 21, ChargeDetail{}, 5); !errors.Is(err, ErrIDConflict) {
		t.Fatalf("charge \"b\" again with another amount: %v, want ErrIDConflict", err)
	}
	if held := book.Balance("acct", 6).Held; held != 1e9-30 {
		t.Fatalf("held %v after charges of 10 and 20 against a 1e9 hold; want %v", held, SU(1e9-30))
	}
}

// mustRead returns a journal read from a book that holds it in memory,
// which cannot fail.
func mustRead(entries []JournalEntry, err error) []JournalEntry {
	if err != nil {
		panic(err)
	}
	return entries
}

// TestKeptJournalIsReadBackFromItsStore: a book that keeps its journal in
// a store (as the FSM keeps it in its state file) holds none of the
// entries stored, and still answers retries, listings and hold states
// with exactly the entries it wrote; a store that fails to read is an
// error, not a panic, and changes nothing.
func TestKeptJournalIsReadBackFromItsStore(t *testing.T) {
	stored := map[uint64][]byte{}
	failing := false
	read := func(seq uint64) ([]byte, error) {
		if failing {
			return nil, errors.New("disk on fire")
		}
		data, ok := stored[seq]
		if !ok {
			return nil, fmt.Errorf("no entry %d", seq)
		}
		return data, nil
	}
	book := NewSUBook()
	var written []JournalEntry
	// commit stores what an operation wrote and lets the book forget it,
	// as the FSM does after each batch (here, after every other one).
	ops := 0
	keep := func(entries []JournalEntry, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := e.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			stored[e.Seq] = data
		}
		written = append(written, entries...)
		if ops++; ops%2 == 0 {
			book.KeepJournalIn(read)
		}
	}
	keep(book.Grant("g", "acct", 1e15, 0, 1))
	for i := range 3000 {
		at := Time(2 + i)
		hold := fmt.Sprintf("job-%d", i)
		keep(book.Hold(hold, "acct", 1000, at))
		detail := ChargeDetail{Runtime: time.Second, Resources: []string{"cpu"}, Demand: []float64{1}, Weights: []float64{0.5}}
		cost, err := Cost(detail.Runtime, detail.Demand, detail.Weights, detail.Rule)
		if err != nil {
			t.Fatal(err)
		}
		keep(book.Charge(hold, hold+"/0", cost, detail, at))
		keep(book.Release(hold, at))
	}
	book.KeepJournalIn(read)
	if held := book.journal.n - book.journal.base; held != 0 || len(book.journal.chunks) > 1 {
		t.Fatalf("after forgetting, the book holds %d entries in %d chunks", held, len(book.journal.chunks))
	}
	journal, err := book.Journal()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(journal, written) {
		t.Fatal("the journal read back from the store differs from what the book wrote")
	}
	if _, err := Verify(journal); err != nil {
		t.Fatal(err)
	}
	for _, retry := range []func() ([]JournalEntry, error){
		func() ([]JournalEntry, error) { return book.Grant("g", "acct", 1e15, 0, 9999) },
		func() ([]JournalEntry, error) { return book.Hold("job-7", "acct", 1000, 9999) },
		func() ([]JournalEntry, error) {
			return book.Charge("job-7", "job-7/0", written[2+3*7].Requested, written[2+3*7].Detail, 9999)
		},
		func() ([]JournalEntry, error) { return book.Release("job-7", 9999) },
	} {
		got, err := retry()
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], written[got[0].Seq-1]) {
			t.Fatalf("a retry answered %+v, %v; want its original entry", got, err)
		}
	}
	if h, _ := book.HoldState("job-7"); !h.Released || h.Voided != written[3+3*7].Amount {
		t.Fatalf("hold state %+v; want released, voiding %v", h, written[3+3*7].Amount)
	}
	// New entries after a forget chain on to the stored ones.
	keep(book.Grant("g2", "acct", 5, 0, 9999))
	if _, err := Verify(mustRead(book.Journal())); err != nil {
		t.Fatalf("the journal with an entry after the forgotten ones: %v", err)
	}

	failing = true
	n, balance := book.Len(), book.Balance("acct", 9999)
	if _, err := book.Charge("job-7", "job-7/0", written[2+3*7].Requested, written[2+3*7].Detail, 9999); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("a retry the store cannot answer: %v, want its error", err)
	}
	if _, err := book.JournalFrom(1, 10); err == nil {
		t.Fatal("a listing the store cannot answer succeeded")
	}
	if book.Len() != n || book.Balance("acct", 9999) != balance {
		t.Fatal("a failed read changed the book")
	}
	failing = false
	stored[5] = stored[6]
	if _, err := book.JournalFrom(5, 1); err == nil || !strings.Contains(err.Error(), "holds entry 6") {
		t.Fatalf("a store answering with the wrong entry: %v, want it refused", err)
	}
}

// TestRebuildAndVerifyFromAStore: a book rebuilt from a journal read one
// entry at a time, with the store to read it back from, ends holding none
// of it, reads it back whole, and stops at the first entry it cannot read.
func TestRebuildAndVerifyFromAStore(t *testing.T) {
	book := NewSUBook()
	mustRead(book.Grant("g", "acct", 1e15, 0, 1))
	for i := range 2*rebuildKeepEvery/3 + 5 {
		hold := fmt.Sprintf("job-%d", i)
		mustRead(book.Hold(hold, "acct", 10, Time(2+i)))
		mustRead(book.Charge(hold, hold+"/0", 3, ChargeDetail{}, Time(2+i)))
		mustRead(book.Release(hold, Time(2+i)))
	}
	journal := mustRead(book.Journal())
	stored := map[uint64][]byte{}
	for _, e := range journal {
		data, err := e.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		stored[e.Seq] = data
	}
	read := func(seq uint64) ([]byte, error) { return stored[seq], nil }
	seq := func(fail int) iter.Seq2[JournalEntry, error] {
		return func(yield func(JournalEntry, error) bool) {
			for i, e := range journal {
				if i == fail {
					yield(JournalEntry{}, errors.New("unreadable"))
					return
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
	rebuilt, err := RebuildSUBookFrom(seq(-1), read)
	if err != nil {
		t.Fatal(err)
	}
	if held := rebuilt.journal.n - rebuilt.journal.base; held != 0 {
		t.Fatalf("the rebuilt book holds %d entries", held)
	}
	if !reflect.DeepEqual(mustRead(rebuilt.Journal()), journal) || rebuilt.Balance("acct", 1e9) != book.Balance("acct", 1e9) {
		t.Fatal("the rebuilt book differs from the one it was rebuilt from")
	}
	if _, err := RebuildSUBookFrom(seq(100), read); err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("a journal that cannot be read: %v, want its error", err)
	}
	// Verification streams the same way, and agrees with the slice's.
	want, err := Verify(journal)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := VerifyFrom(seq(-1), read); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed verification: %+v, %v; want %+v", got, err, want)
	}
	got, err := VerifyFrom(seq(100), read)
	if err == nil || got.Entries != 100 {
		t.Fatalf("a journal unreadable at entry 101: verified %d entries, %v; want 100 and its error", got.Entries, err)
	}
	altered := slices.Clone(journal)
	altered[len(altered)-5].Amount++
	if _, err := VerifyFrom(entrySeq(altered), read); !errors.Is(err, ErrJournalCorrupt) {
		t.Fatalf("a journal with an altered entry past the first letting go: %v, want it found", err)
	}
}
