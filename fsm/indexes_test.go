package fsm

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The digest that replicas compare counts the state alone: not the
// derived indexes, nor a bucket a newer release added (its snapshot,
// restored by a server of this one during a rolling upgrade, carries its
// own derived indexes). A change to a state record does change it.
func TestDigestCountsTheStateAlone(t *testing.T) {
	h := newWorkload(t, 4).run(200)
	want := digestOf(t, h.f)
	f := h.f
	// edit changes the state file the last FSM opened and reads the digest
	// of what it holds then.
	edit := func(fn func(tx *bolt.Tx) error) [32]byte {
		t.Helper()
		editStateFile(t, f, fn)
		f = openFSM(t, h.dir)
		return digestOf(t, f)
	}
	if got := edit(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("from_a_newer_release"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}); got != want {
		t.Fatalf("a newer release's bucket changed the digest: %x, was %x", got, want)
	}
	if got := edit(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobsEnded).Put([]byte("\x00extra"), nil)
	}); got != want {
		t.Fatalf("an entry in a derived index changed the digest: %x, was %x", got, want)
	}
	if got := edit(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAccounts).Put([]byte("zz-not-an-account"), []byte("{}"))
	}); got == want {
		t.Fatal("a record added to the accounts bucket left the digest as it was: the test proves nothing")
	}
}
