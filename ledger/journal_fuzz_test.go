package ledger

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// FuzzVerifyMutatedJournal damages the stored form of a valid journal
// (flips a byte, cuts an entry short, removes, swaps or duplicates entries)
// and checks that nothing panics and that the damage never goes unnoticed:
// either an entry no longer decodes, or Verify fails, or (when the tail was
// cut off) the journal's head differs from the book's.
func FuzzVerifyMutatedJournal(f *testing.F) {
	journal := sampleJournal(f)
	encoded := make([][]byte, len(journal))
	for i, e := range journal {
		encoded[i], _ = e.MarshalBinary()
	}
	wantHead := journal[len(journal)-1].Hash
	for op := range uint8(6) {
		for _, entry := range []uint16{0, 5, 11} {
			f.Add(op, entry, uint16(60), uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, entry, offset uint16, xor uint8) {
		stored := make([][]byte, len(encoded))
		for i := range encoded {
			stored[i] = bytes.Clone(encoded[i])
		}
		i := int(entry) % len(stored)
		switch op % 6 {
		case 0: // flip bits in one byte
			if xor == 0 {
				xor = 1
			}
			stored[i][int(offset)%len(stored[i])] ^= xor
		case 1: // cut an entry short
			stored[i] = stored[i][:int(offset)%len(stored[i])]
		case 2: // remove an entry
			stored = slices.Delete(stored, i, i+1)
		case 3: // swap two entries
			k := int(offset) % len(stored)
			if k == i {
				k = (i + 1) % len(stored)
			}
			stored[i], stored[k] = stored[k], stored[i]
		case 4: // duplicate an entry somewhere
			stored = slices.Insert(stored, int(offset)%(len(stored)+1), stored[i])
		case 5: // remove the tail from entry i on
			stored = stored[:i]
		}
		entries := make([]JournalEntry, len(stored))
		for k, data := range stored {
			if err := entries[k].UnmarshalBinary(data); err != nil {
				if !errors.Is(err, ErrBadEntryEncoding) {
					t.Fatalf("decode error %v does not wrap ErrBadEntryEncoding", err)
				}
				return // the damage is caught when reading
			}
			// The encoding is canonical: what decodes re-encodes to itself.
			if again, _ := entries[k].MarshalBinary(); !bytes.Equal(again, data) {
				t.Fatalf("entry %d decodes but re-encodes differently", k)
			}
		}
		report, err := Verify(entries)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Seq == 0 || report.Entries != int(ve.Seq)-1 {
				t.Fatalf("Verify error %v does not name the first bad entry (report covers %d)", err, report.Entries)
			}
			return
		}
		if report.Head == wantHead {
			t.Fatalf("damage %d to entry %d went unnoticed: the journal verifies and ends at the original head", op%6, i)
		}
	})
}

// FuzzUnmarshalJournalEntry feeds arbitrary bytes to the decoder: it must
// never panic, and anything it accepts must re-encode to the same bytes.
func FuzzUnmarshalJournalEntry(f *testing.F) {
	for _, e := range sampleJournal(f) {
		data, _ := e.MarshalBinary()
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var e JournalEntry
		if err := e.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := e.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes re-encode differently (%v)", err)
		}
		// A lone entry verifies only if it is a well-formed first entry.
		_, _ = Verify([]JournalEntry{e})
	})
}
