package boltcheck

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// populate writes a bbolt file with a few buckets, large and small (the
// small ones inline), as the FSM and the Raft log do.
func populate(t *testing.T, path string, noFreelistSync bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: noFreelistSync})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for round := range 4 {
		err := db.Update(func(tx *bolt.Tx) error {
			for _, name := range []string{"big", "small", "meta"} {
				b, err := tx.CreateBucketIfNotExists([]byte(name))
				if err != nil {
					return err
				}
				n := 400
				if name != "big" {
					n = 2
				}
				for i := range n {
					if err := b.Put(fmt.Appendf(nil, "%s-%05d", name, i), []byte(strings.Repeat("v", 50+round*20+i%30))); err != nil {
						return err
					}
				}
			}
			// Deletes leave free pages for the freelist to list.
			return tx.Bucket([]byte("big")).Delete(fmt.Appendf(nil, "big-%05d", round))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// open is what the servers do at start-up: Precheck, then bbolt's open
// and consistency check under Guard.
func open(path string, noFreelistSync bool) error {
	if err := Precheck(path, "restore it"); err != nil {
		return err
	}
	return Guard(path, "restore it", func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: noFreelistSync})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			if err := Check(tx, path, "restore it"); err != nil {
				return err
			}
			return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
				return b.ForEach(func(_, _ []byte) error { return nil })
			})
		})
	})
}

// TestDamagedFilesAreRefusedNeverPanic damages copies of bbolt files in
// many seeded ways — truncations, overwritten ranges, flipped bytes — and
// opens each as a server does. Damage bbolt would panic or fault on must
// come back as an error (a panic in one of bbolt's own goroutines would
// end this test binary); the undamaged file must open.
func TestDamagedFilesAreRefusedNeverPanic(t *testing.T) {
	for _, nfs := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFreelistSync=%v", nfs), func(t *testing.T) {
			dir := t.TempDir()
			orig := filepath.Join(dir, "orig.db")
			populate(t, orig, nfs)
			if err := open(orig, nfs); err != nil {
				t.Fatalf("the undamaged file is refused: %v", err)
			}
			data, err := os.ReadFile(orig)
			if err != nil {
				t.Fatal(err)
			}
			used := int64(len(data))
			refused := 0
			const trials = 300
			for seed := range uint64(trials) {
				r := rand.New(rand.NewPCG(seed, 7))
				b := append([]byte(nil), data...)
				switch seed % 3 {
				case 0: // truncated
					b = b[:r.Int64N(used)]
				case 1: // a range overwritten
					off := r.Int64N(used)
					for i := off; i < min(used, off+r.Int64N(8192)+1); i++ {
						b[i] = byte(r.Uint32())
					}
				case 2: // a few bytes flipped
					for range r.IntN(8) + 1 {
						b[r.Int64N(used)] ^= byte(r.IntN(255) + 1)
					}
				}
				path := filepath.Join(dir, fmt.Sprintf("damaged-%d.db", seed))
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
				err := open(path, nfs)
				if err != nil {
					refused++
					var ce *CorruptError
					if errors.As(err, &ce) && !strings.Contains(err.Error(), path) {
						t.Errorf("seed %d: the refusal does not name the file: %v", seed, err)
					}
				}
				os.Remove(path)
			}
			t.Logf("%d of %d damaged copies refused, the rest opened (damage in unused bytes or values)", refused, trials)
		})
	}
}
