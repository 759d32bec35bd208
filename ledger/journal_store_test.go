package ledger

import (
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
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
	journal := book.Journal()
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
