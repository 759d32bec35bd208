package ledger

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// sampleJournal builds a journal that uses every kind of entry: expiring
// and permanent grants, holds over several grants, detailed and capped
// charges, releases.
func sampleJournal(tb testing.TB) []JournalEntry {
	tb.Helper()
	b := NewSUBook()
	w := BillingWeights{1, 0.5}
	detail := func(h time.Duration, cpu float64) (SU, ChargeDetail) {
		d := ChargeDetail{Runtime: h, Demand: Vector{cpu, 4}, Weights: w, Resources: []string{"cpu", "mem"}}
		c, err := Cost(d.Runtime, d.Demand, d.Weights, BillingSum)
		if err != nil {
			tb.Fatal(err)
		}
		return c, d
	}
	steps := []func() ([]JournalEntry, error){
		func() ([]JournalEntry, error) { return b.Grant("g-2025", "astro", wholeSU(100), 1000, 10) },
		func() ([]JournalEntry, error) { return b.Grant("g-perm", "astro", wholeSU(50), 0, 20) },
		func() ([]JournalEntry, error) { return b.Grant("g-bio", "bio", wholeSU(80), 0, 30) },
		func() ([]JournalEntry, error) { return b.Hold("job1", "astro", wholeSU(120), 40) },
		func() ([]JournalEntry, error) { return b.Hold("job2", "bio", wholeSU(30), 50) },
		func() ([]JournalEntry, error) {
			c, d := detail(2*time.Hour, 8)
			return b.Charge("job1", "job1.0#1", c, d, 60)
		},
		func() ([]JournalEntry, error) {
			c, d := detail(3*time.Hour, 8)
			return b.Charge("job1", "job1.1#1", c, d, 70)
		},
		func() ([]JournalEntry, error) { return b.Charge("job2", "job2.0#1", wholeSU(45), ChargeDetail{}, 80) }, // capped
		func() ([]JournalEntry, error) { return b.Release("job2", 90) },
		func() ([]JournalEntry, error) { return b.Release("job1", 1500) }, // after g-2025 expired
		func() ([]JournalEntry, error) { return b.Hold("job3", "astro", wholeSU(10), 1600) },
		func() ([]JournalEntry, error) {
			c, d := detail(time.Hour, 1)
			return b.Charge("job3", "job3.0#1", c, d, 1700)
		},
	}
	for i, step := range steps {
		if _, err := step(); err != nil {
			tb.Fatalf("step %d: %v", i, err)
		}
	}
	return mustRead(b.Journal())
}

// cloneJournal deep-copies a journal so a test can tamper with it.
func cloneJournal(j []JournalEntry) []JournalEntry {
	out := make([]JournalEntry, len(j))
	for i, e := range j {
		out[i] = e.Clone()
	}
	return out
}

// rechain renumbers and rehashes entries from position from on, as a forger
// who knows the hash function would.
func rechain(j []JournalEntry, from int) {
	for i := from; i < len(j); i++ {
		j[i].Seq = uint64(i) + 1
		j[i].PrevHash = Hash{}
		if i > 0 {
			j[i].PrevHash = j[i-1].Hash
		}
		j[i].Hash = j[i].ComputeHash()
	}
}

func wantVerifyError(t *testing.T, what string, j []JournalEntry, seq uint64, mention string) {
	t.Helper()
	report, err := Verify(j)
	var ve *VerifyError
	if !errors.As(err, &ve) || !errors.Is(err, ErrJournalCorrupt) {
		t.Fatalf("%s: Verify = %v, want a *VerifyError", what, err)
	}
	if ve.Seq != seq {
		t.Fatalf("%s: Verify names entry %d (%v), want %d", what, ve.Seq, err, seq)
	}
	if report.Entries != int(seq)-1 {
		t.Fatalf("%s: report covers %d entries, want the %d before the bad one", what, report.Entries, seq-1)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Fatalf("%s: error %q does not mention %q", what, err, mention)
	}
	if _, err := RebuildSUBook(j); !errors.Is(err, ErrJournalCorrupt) {
		t.Fatalf("%s: RebuildSUBook accepted the journal: %v", what, err)
	}
}

func TestVerifyAcceptsAnIntactJournal(t *testing.T) {
	j := sampleJournal(t)
	report, err := Verify(j)
	if err != nil {
		t.Fatal(err)
	}
	last := j[len(j)-1]
	if report.Entries != len(j) || report.LastSeq != last.Seq || report.Head != last.Hash || report.At != last.Time {
		t.Fatalf("report %+v does not end at the last entry", report)
	}
	// Hand-computed from sampleJournal: job1 charged 2h and 3h of 8 cpu + 4
	// mem at cpu=1, mem=0.5 (10 SU/h → 20 + 30 SU); job2 capped at its 30
	// SU; job3 1h of 1 cpu + 4 mem = 3 SU. g-2025 (100 SU, expired at 1000)
	// paid for job1's 50 SU; the 50 SU given back to it on release expired.
	want := []Balance{
		{Account: "astro", Granted: wholeSU(150), Charged: wholeSU(53), Held: wholeSU(7), Expired: wholeSU(50), Available: wholeSU(40)},
		{Account: "bio", Granted: wholeSU(80), Charged: wholeSU(30), Available: wholeSU(50)},
	}
	if !slices.Equal(report.Accounts, want) {
		t.Fatalf("balances %+v, want %+v", report.Accounts, want)
	}
	if report.Issued != wholeSU(230) || report.Billed != wholeSU(83) || report.Held != wholeSU(7) {
		t.Fatalf("totals issued %v billed %v held %v", report.Issued, report.Billed, report.Held)
	}
	if empty, err := Verify(nil); err != nil || empty.Entries != 0 || len(empty.Accounts) != 0 {
		t.Fatalf("empty journal: %+v, %v", empty, err)
	}
}

func TestVerifyFindsTheFirstBadEntry(t *testing.T) {
	orig := sampleJournal(t)
	n := len(orig)
	for i := range n {
		seq := uint64(i) + 1
		j := cloneJournal(orig)
		j[i].Amount++
		wantVerifyError(t, "changed amount", j, seq, "altered")

		j = cloneJournal(orig)
		j[i].Account = "mallory"
		wantVerifyError(t, "changed account", j, seq, "altered")

		j = cloneJournal(orig)
		j[i].Time--
		wantVerifyError(t, "changed time", j, seq, "altered")

		j = cloneJournal(orig)
		j[i].Hash[31] ^= 1
		wantVerifyError(t, "changed hash", j, seq, "does not match its content")

		j = cloneJournal(orig)
		for k := 16; k < len(j[i].Hash); k++ {
			j[i].Hash[k] = 0 // a hash cut to 16 bytes and zero-padded
		}
		wantVerifyError(t, "truncated hash", j, seq, "hash")

		if i < n-1 {
			j = slices.Delete(cloneJournal(orig), i, i+1)
			wantVerifyError(t, "removed entry", j, seq, "missing")

			j = cloneJournal(orig)
			j[i], j[i+1] = j[i+1], j[i]
			wantVerifyError(t, "reordered entries", j, seq, "reordered")
		}

		// An entry copied from elsewhere into position i.
		j = slices.Insert(cloneJournal(orig), i, orig[(i+3)%n].Clone())
		wantVerifyError(t, "inserted copy", j, seq, "inserted")

		// A well-formed new grant inserted with the right Seq and PrevHash:
		// the entry after it no longer follows.
		j = slices.Insert(cloneJournal(orig), i, JournalEntry{Seq: seq, Time: orig[i].Time, Kind: EntryGrant, ID: "forged", Account: "mallory", Amount: wholeSU(1e6)})
		if i > 0 {
			j[i].PrevHash = j[i-1].Hash
		}
		j[i].Hash = j[i].ComputeHash()
		wantVerifyError(t, "inserted grant", j, seq+1, "inserted")
	}
}

// TestVerifyCatchesForgeriesWithRecomputedHashes: someone who rewrites an
// entry and recomputes every hash after it keeps the chain intact, but the
// replay finds that the entry does not follow from the ones before it.
func TestVerifyCatchesForgeriesWithRecomputedHashes(t *testing.T) {
	orig := sampleJournal(t)
	find := func(kind EntryKind, id string) int {
		return slices.IndexFunc(orig, func(e JournalEntry) bool { return e.Kind == kind && e.ID == id })
	}
	forgeries := []struct {
		name    string
		at      int
		mutate  func(e *JournalEntry)
		mention string
	}{
		{"charge amount lowered", find(EntryCharge, "job1.0#1"), func(e *JournalEntry) { e.Amount -= wholeSU(5) }, "replaying the journal gives"},
		{"charge moved to another account", find(EntryCharge, "job1.1#1"), func(e *JournalEntry) { e.Account = "bio" }, "belongs to"},
		{"charge requested changed", find(EntryCharge, "job1.0#1"), func(e *JournalEntry) { e.Requested++ }, "does not match its detail"},
		{"charge detail changed", find(EntryCharge, "job1.0#1"), func(e *JournalEntry) { e.Detail.Runtime = time.Hour }, "does not match its detail"},
		{"release voids more", find(EntryRelease, "job2"), func(e *JournalEntry) { e.Amount += wholeSU(10) }, "replaying the journal gives"},
		{"hold drawn from another grant", find(EntryHold, "job1"), func(e *JournalEntry) { e.Funds = []Fund{{"g-perm", e.Amount}} }, "funds"},
		{"hold larger than the balance", find(EntryHold, "job2"), func(e *JournalEntry) { e.Amount = wholeSU(1000) }, "insufficient SU"},
		{"time moved backwards", find(EntryCharge, "job1.1#1"), func(e *JournalEntry) { e.Time = 0 }, "earlier than the entry before it"},
		{"unknown kind", find(EntryRelease, "job1"), func(e *JournalEntry) { e.Kind = 9 }, "unknown entry kind"},
		{"charge repeated", find(EntryCharge, "job1.1#1"), func(e *JournalEntry) {
			*e = orig[find(EntryCharge, "job1.0#1")].Clone()
			e.Time = 70
		}, "repeats entry"},
		{"grant to a reserved account", find(EntryGrant, "g-bio"), func(e *JournalEntry) { e.Account = CenterAccount }, "reserved"},
	}
	for _, f := range forgeries {
		if f.at < 0 {
			t.Fatalf("%s: sample journal lacks the entry", f.name)
		}
		j := cloneJournal(orig)
		f.mutate(&j[f.at])
		rechain(j, f.at)
		wantVerifyError(t, f.name, j, uint64(f.at)+1, f.mention)
	}
}

// TestVerifyHeadRevealsACutTail: a journal with its last entries removed is
// still a valid chain; its head differs from the one the book keeps.
func TestVerifyHeadRevealsACutTail(t *testing.T) {
	b := NewSUBook()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := b.Grant(id, "x", wholeSU(1), 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	j := mustRead(b.Journal())
	report, err := Verify(j[:2])
	if err != nil {
		t.Fatal(err)
	}
	if seq, head := b.Head(); report.LastSeq == seq || report.Head == head {
		t.Fatal("a cut journal has the same head as the whole one")
	}
	full, _ := Verify(j)
	if seq, head := b.Head(); full.LastSeq != seq || full.Head != head {
		t.Fatal("the whole journal's head differs from the book's")
	}
}
