package fsm

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/internal/durable"
)

// Checkpoint is the state check, in two entries. One without CompareIndex
// asks every replica to digest its state as of the entry before it
// (Digest's SHA-256 of every record); the leader then proposes one with
// CompareIndex set to that entry's index and its own digest, for every
// replica to compare with its own. Neither changes replicated state beyond
// the applied index and time: a replica whose digest differs marks only
// itself diverged (Diverged), in memory, and the server stops serving
// reads from it. This is etcd's corruption check (HashKV compared at one
// revision), with the index made exact by the log: every replica digests
// the same prefix of it.
//
// A checkpoint must be an entry of its own; one inside a multi-command
// entry is refused.
type Checkpoint struct {
	CompareIndex uint64 `json:"compare_index,omitempty"`
	// Digest is the leader's digest at CompareIndex, in hex.
	Digest string `json:"digest,omitempty"`
}

func (*Checkpoint) Type() CommandType { return TypeCheckpoint }

func (c *Checkpoint) validate(rules) *Error {
	if c.CompareIndex == 0 {
		if c.Digest != "" {
			return invalid("checkpoint carries a digest but no compare_index: give the index of the checkpoint it digests")
		}
		return nil
	}
	if _, err := ParseDigest(c.Digest); err != nil {
		return invalid("checkpoint digest: %v", err)
	}
	return nil
}

// CheckpointInfo is a Checkpoint's result: the index whose predecessor
// every replica digests.
type CheckpointInfo struct {
	Index uint64
}

// ParseDigest reads a digest written in hex (64 characters).
func ParseDigest(s string) ([32]byte, error) {
	var d [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("%q is not a SHA-256 digest in hex (64 characters)", s)
	}
	copy(d[:], b)
	return d, nil
}

// startsDigest reports whether a log entry is a single Checkpoint that
// asks for a digest, of version 3 or later: a leader of the release
// before still proposes them during a rolling upgrade. Only such entries
// are decoded twice.
func startsDigest(data []byte) bool {
	if len(data) < envelopeHeader || data[0] != CommandVersion && data[0] != wholeUnitsVersion || CommandType(data[1]) != TypeCheckpoint {
		return false
	}
	env, err := Decode(data)
	if err != nil {
		return false
	}
	c, ok := env.Command.(*Checkpoint)
	return ok && c.CompareIndex == 0
}

func (b *batch) checkpoint(c *Checkpoint) (any, error) {
	if !b.single {
		return nil, invalid("a checkpoint must be a log entry of its own, not part of a multi-command entry")
	}
	if c.CompareIndex != 0 && b.integ != nil {
		d, _ := ParseDigest(c.Digest)
		b.integ.expect(c.CompareIndex, d)
	}
	return CheckpointInfo{Index: b.index}, nil
}

// Divergence says that this replica's state differs from the leader's (or
// from most servers') at a checkpoint, or from what it held when it last
// shut down.
type Divergence struct {
	// Index is the checkpoint's index: the states compared are those after
	// every entry before it.
	Index uint64
	// Local is this replica's digest, Other the one it was compared with:
	// most servers', or the leader's when most could not be asked.
	Local, Other [32]byte
	// WhileStopped is set when the state file changed while the server was
	// stopped: Index is then its applied index, and Other the digest it
	// recorded at shutdown.
	WhileStopped bool
}

func (d *Divergence) Error() string {
	if d.WhileStopped {
		return fmt.Sprintf("this server's state file was changed while it was stopped (at applied index %d its digest is %x, %x when it shut down) and it no longer serves reads: restore it: %s",
			d.Index, d.Local[:8], d.Other[:8], DamagedStateRemedy)
	}
	return fmt.Sprintf("this server's state diverged from the group's at index %d (digest %x here, %x in the group) and it no longer serves reads: restore it: %s",
		d.Index, d.Local[:8], d.Other[:8], DamagedStateRemedy)
}

// keptCheckpoints is how many checkpoints' digests a replica remembers.
// Comparisons come one checkpoint after the one they compare; more only
// serve the operator's verify-state on a busy group.
const keptCheckpoints = 16

type digestResult struct {
	done bool
	sum  [32]byte
	err  error
}

// integrity holds a replica's own view of its checkpoints: its digests,
// the leader's digests waiting for its own, and whether it diverged. None
// of it is replicated or persisted; a restarted replica compares from its
// next checkpoint on.
type integrity struct {
	log *slog.Logger

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every change
	digests  map[uint64]*digestResult
	expected map[uint64][32]byte
	latest   uint64
	// diverged is written under mu and read without it: every read the
	// server serves looks at it.
	diverged atomic.Pointer[Divergence]
}

func newIntegrity(log *slog.Logger) *integrity {
	return &integrity{log: log, changed: make(chan struct{}), digests: make(map[uint64]*digestResult), expected: make(map[uint64][32]byte)}
}

// notify wakes every waiter. The caller holds mu.
func (in *integrity) notify() {
	close(in.changed)
	in.changed = make(chan struct{})
}

// start digests db as of now — the state before checkpoint index — from a
// read transaction, off the apply path: bbolt's read transaction is a
// consistent snapshot while later entries apply.
func (in *integrity) start(db *bolt.DB, index uint64) {
	in.mu.Lock()
	if _, ok := in.digests[index]; ok {
		// The batch was applied again after a panic; the digest of the
		// same committed prefix is already on its way.
		in.mu.Unlock()
		return
	}
	r := &digestResult{}
	in.digests[index] = r
	in.latest = max(in.latest, index)
	for len(in.digests) > keptCheckpoints {
		oldest := slices.Min(mapKeys(in.digests))
		delete(in.digests, oldest)
		delete(in.expected, oldest)
	}
	in.notify()
	in.mu.Unlock()
	tx, err := db.Begin(false)
	if err != nil {
		in.record(index, [32]byte{}, fmt.Errorf("begin read transaction: %w", err))
		return
	}
	go func() {
		sum, err := digestTx(tx, nil)
		_ = tx.Rollback()
		in.record(index, sum, err)
	}()
}

func (in *integrity) record(index uint64, sum [32]byte, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	r, ok := in.digests[index]
	if !ok {
		return
	}
	r.done, r.sum, r.err = true, sum, err
	if err != nil {
		in.log.Error("fsm: could not digest the state at a checkpoint; it will not be compared", "index", index, "err", err)
	} else if want, ok := in.expected[index]; ok {
		delete(in.expected, index)
		in.compare(index, sum, want)
	}
	in.notify()
}

// expect records the group's digest at checkpoint index (as the leader
// judged it), and compares it with this replica's when that is known.
func (in *integrity) expect(index uint64, leader [32]byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	r, ok := in.digests[index]
	switch {
	case !ok:
		in.log.Info("fsm: cannot compare checkpoint: this server did not digest it (it restarted or installed a snapshot since); the next one is compared", "index", index)
	case !r.done:
		in.expected[index] = leader
	case r.err == nil:
		in.compare(index, r.sum, leader)
		in.notify()
	}
}

// compare sets or clears the divergence. A later checkpoint that matches
// clears an earlier mismatch: the state is the same again (the record
// that differed was rewritten, or the mismatch was the leader's).
// The caller holds mu.
func (in *integrity) compare(index uint64, local, other [32]byte) {
	prev := in.diverged.Load()
	if local == other {
		if prev != nil && prev.Index < index {
			in.log.Warn("fsm: the state matches the group's again; serving reads", "index", index, "diverged_at", prev.Index)
			in.diverged.Store(nil)
		}
		return
	}
	if prev == nil || prev.Index <= index {
		in.diverged.Store(&Divergence{Index: index, Local: local, Other: other})
	}
	in.log.Error("fsm: STATE DIVERGED: this server's state differs from the group's at a checkpoint; it stops serving reads until restored",
		"index", index, "local_digest", fmt.Sprintf("%x", local), "other_digest", fmt.Sprintf("%x", other), "remedy", DamagedStateRemedy)
}

// Diverged returns why this replica's state is known to differ from the
// group's, or nil.
func (f *FSM) Diverged() *Divergence {
	d := f.integ.diverged.Load()
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// LatestCheckpoint is the index of the newest checkpoint this replica has
// applied since it opened, or 0.
func (f *FSM) LatestCheckpoint() uint64 {
	in := f.integ
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.latest
}

// CheckpointDigest returns this replica's digest of its state before
// checkpoint index, waiting (until ctx ends) for the checkpoint to apply
// and its digest to finish. It is NotFound when this replica will never
// have it: it applied that checkpoint before it restarted or restored a
// snapshot, or it is too old to be remembered.
func (f *FSM) CheckpointDigest(ctx context.Context, index uint64) ([32]byte, error) {
	in := f.integ
	for {
		in.mu.Lock()
		var r digestResult
		p, ok := in.digests[index]
		if ok {
			r = *p
		}
		ch := in.changed
		in.mu.Unlock()
		if r.done {
			return r.sum, r.err
		}
		if !ok {
			if applied, _ := f.AppliedIndex(); applied >= index {
				return [32]byte{}, refuse(KindNotFound, "this server has no digest of checkpoint %d: it applied it before it restarted or restored a snapshot, or it is too old; compare a newer checkpoint", index)
			}
		}
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
			// Entries that are not checkpoints move the applied index
			// without a signal here.
		case <-ctx.Done():
			return [32]byte{}, fmt.Errorf("wait for the digest of checkpoint %d: %w", index, ctx.Err())
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// shutdownFile records, next to the state file, the digest of the state a
// clean shutdown left: the start-up check recomputes it. It is local to
// this server, never replicated, and removed when read.
const shutdownFile = FileName + ".shutdown-digest"

type shutdownRecord struct {
	Applied uint64 `json:"applied"`
	Digest  string `json:"digest"`
}

// recordShutdownDigest writes the digest of the state as Close leaves it.
// The caller holds mu. A failure is only logged: the periodic check still
// compares this server with the others.
func (f *FSM) recordShutdownDigest() {
	var sum [32]byte
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		sum, err = digestTx(tx, nil)
		return err
	})
	if err == nil {
		var data []byte
		data, err = json.Marshal(shutdownRecord{Applied: f.st.applied, Digest: hex.EncodeToString(sum[:])})
		if err == nil {
			err = writeSynced(filepath.Join(f.dir, shutdownFile), bytes.NewReader(data))
		}
	}
	if err != nil {
		f.log.Warn("fsm: could not record the state's digest at shutdown; the next start cannot check the file against it", "err", err)
	}
}

// discardUnclean removes a state file that was not closed cleanly (it has
// no shutdown record): with Options.RebuiltFromLog its last commits may
// not have reached the disk, so it is rebuilt from the log rather than
// trusted (and rather than refused as damaged, which a torn file could
// be).
func (f *FSM) discardUnclean() error {
	if _, err := os.Stat(f.path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(f.dir, shutdownFile)); err == nil {
		return nil
	}
	f.log.Warn("fsm: the state file was not closed cleanly (a crash or a power loss) and its last commits skipped the disk sync; discarding it: raft restores the latest snapshot and replays the log after it", "path", f.path)
	if err := os.Remove(f.path); err != nil {
		return fmt.Errorf("fsm: discard the state file that was not closed cleanly: %w", err)
	}
	if err := durable.SyncDir(f.dir); err != nil {
		return fmt.Errorf("fsm: discard the state file that was not closed cleanly: %w", err)
	}
	return nil
}

// checkShutdownDigest is the start-up check of a state file that a clean
// shutdown left: if nothing was applied since, its digest must be the one
// recorded then. A file changed while the server was stopped marks the
// replica diverged before it serves anything. After a crash there is no
// record for the state found, and the periodic check compares it.
func (f *FSM) checkShutdownDigest() error {
	path := filepath.Join(f.dir, shutdownFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	// A record is used once: a later crash must not leave one that seems
	// to describe newer state. Its removal is synced before any commit
	// that skips the disk sync (Options.RebuiltFromLog) could be lost
	// with it.
	err = os.Remove(path)
	if err == nil {
		err = durable.SyncDir(f.dir)
	}
	if err != nil {
		if f.noSync {
			return fmt.Errorf("fsm: remove the shutdown digest record %s: %w", path, err)
		}
		f.log.Warn("fsm: could not remove the shutdown digest record", "path", path, "err", err)
	}
	var rec shutdownRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Applied != f.st.applied {
		return nil
	}
	want, err := ParseDigest(rec.Digest)
	if err != nil {
		return nil
	}
	got, err := f.Digest()
	if err != nil || got == want {
		return nil
	}
	d := &Divergence{Index: f.st.applied, Local: got, Other: want, WhileStopped: true}
	f.integ.diverged.Store(d)
	f.log.Error("fsm: STATE CHANGED WHILE STOPPED: the state file's digest differs from the one recorded at shutdown; this server serves no reads until restored",
		"path", f.path, "applied_index", f.st.applied, "digest", fmt.Sprintf("%x", got), "recorded", rec.Digest, "remedy", DamagedStateRemedy)
	return nil
}
