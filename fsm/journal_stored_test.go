package fsm

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// storedEntries decodes ahead of its caller on a goroutine of its own: the
// caller still gets every entry in order, an entry that does not decode
// ends the sequence with an error naming it (past the first batches too),
// and a caller that stops early leaves nothing reading the transaction
// (the race detector would see it read after the rollback).
func TestStoredEntriesDecodeAheadInOrder(t *testing.T) {
	book := ledger.NewSUBook()
	if _, err := book.Grant("g", "phys", 1e12, 0, 1); err != nil {
		t.Fatal(err)
	}
	n := 3*decodeAhead + 5
	for i := 1; i < n; i++ {
		if _, err := book.Hold(fmt.Sprintf("h%d", i), "phys", 1, ledger.Time(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := book.Journal()
	if err != nil || len(want) != n {
		t.Fatalf("journal: %d entries, %v", len(want), err)
	}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "j.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bad := 2*decodeAhead + 3 // a position in the third batch
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketJournal)
		if err != nil {
			return err
		}
		for _, e := range want {
			data, err := e.MarshalBinary()
			if err != nil {
				return err
			}
			if err := b.Put(u64(e.Seq), data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(stopAfter int) (got []ledger.JournalEntry, end error) {
		t.Helper()
		if err := db.View(func(tx *bolt.Tx) error {
			for e, err := range storedEntries(tx.Bucket(bucketJournal)) {
				if err != nil {
					end = err
					break
				}
				if got = append(got, e); len(got) == stopAfter {
					break
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got, end
	}
	if got, err := read(-1); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d entries (%v), want the %d written, equal", len(got), err, len(want))
	}
	if got, err := read(10); err != nil || !reflect.DeepEqual(got, want[:10]) {
		t.Fatalf("stopping after 10: %d entries, %v", len(got), err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJournal).Put(u64(want[bad].Seq), []byte{0xff, 0x01})
	}); err != nil {
		t.Fatal(err)
	}
	got, err := read(-1)
	var ve *ledger.VerifyError
	if !errors.As(err, &ve) || ve.Seq != want[bad].Seq || ve.Position != bad || !reflect.DeepEqual(got, want[:bad]) {
		t.Fatalf("with entry %d damaged: %d entries then %v; want the %d before it, then an error naming it", want[bad].Seq, len(got), err, bad)
	}
}
