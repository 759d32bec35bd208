package fsm

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/internal/durable"
)

// Snapshot returns a consistent point-in-time copy of the state: a bbolt
// read transaction that Persist streams out while applies continue.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return nil, fmt.Errorf("fsm: snapshot of a closed FSM")
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("fsm: snapshot: begin read transaction: %w", err)
	}
	return &snapshot{tx: tx}, nil
}

type snapshot struct{ tx *bolt.Tx }

// Persist writes the bbolt file as of the snapshot to sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.tx.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("fsm: write snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("fsm: close snapshot: %w", err)
	}
	return nil
}

// Release ends the snapshot's read transaction.
func (s *snapshot) Release() { _ = s.tx.Rollback() }

// Restore replaces the whole state with a snapshot: it writes the snapshot
// to a temporary file in the data directory, syncs it, opens it (which
// checks every page and loads the state), then swaps it in with an atomic
// rename and keeps what it loaded. If anything fails before the swap, the
// current state is left as it was.
//
// The file stays open across the rename: bbolt holds it by descriptor, so
// the state loaded to check the snapshot is the state served after it,
// rather than loaded a second time (half of a restore's time, which grows
// with the history).
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	tmp := f.path + ".restore"
	if err := writeSynced(tmp, rc); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("fsm: restore: %w", err)
	}
	db, st, err := openStore(tmp)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("fsm: restore: the snapshot is not a usable longfair state: %w", err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db != nil {
		if err := f.db.Close(); err != nil {
			db.Close()
			os.Remove(tmp)
			return fmt.Errorf("fsm: restore: close the current state: %w", err)
		}
		f.db = nil
	}
	if err := os.Rename(tmp, f.path); err != nil {
		db.Close()
		os.Remove(tmp)
		return f.reopenAfter(fmt.Errorf("fsm: restore: swap in the snapshot: %w", err))
	}
	if err := durable.SyncDir(filepath.Dir(f.path)); err != nil {
		db.Close()
		return f.reopenAfter(fmt.Errorf("fsm: restore: %w", err))
	}
	db.NoSync = f.noSync
	f.install(db, st)
	f.aclGen.Add(1)
	f.broken = nil
	f.log.Info("fsm restored from snapshot", "applied_index", st.applied, "active_jobs", len(st.jobs))
	return nil
}

// reopenAfter reopens the state file after a restore that failed with
// cause, and returns cause.
func (f *FSM) reopenAfter(cause error) error {
	db, st, err := openStore(f.path)
	if err != nil {
		f.broken = fmt.Errorf("reopen after restore: %w", err)
		f.log.Error("fsm could not reopen its state after a restore", "err", err)
		return cause
	}
	db.NoSync = f.noSync
	f.install(db, st)
	f.aclGen.Add(1)
	return cause
}

func writeSynced(path string, r io.Reader) error {
	file, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(file, r); err != nil {
		file.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return file.Close()
}

// Digest is the SHA-256 of every bucket's contents in key order (but the
// fairness history's, history.go): two
// replicas that applied the same log have the same digest.
func (f *FSM) Digest() ([32]byte, error) { return f.digest(nil) }

// digest hashes every record that skip (if not nil) does not leave out.
func (f *FSM) digest(skip func(bucket, key []byte) bool) ([32]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var sum [32]byte
	if f.db == nil {
		return sum, fmt.Errorf("fsm: digest of a closed FSM")
	}
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		sum, err = digestTx(tx, skip)
		return err
	})
	return sum, err
}

// digestTx is the digest of the state tx sees.
func digestTx(tx *bolt.Tx, skip func(bucket, key []byte) bool) ([32]byte, error) {
	var sum [32]byte
	h := sha256.New()
	err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		if !isState(name) {
			return nil
		}
		writeField(h, name)
		return b.ForEach(func(k, v []byte) error {
			if skip != nil && skip(name, k) {
				return nil
			}
			writeField(h, k)
			writeField(h, v)
			return nil
		})
	})
	if err != nil {
		return sum, fmt.Errorf("fsm: digest: %w", err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// writeField writes a length-prefixed field, so that no two different
// contents hash the same stream.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
