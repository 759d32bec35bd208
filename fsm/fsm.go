package fsm

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/internal/boltcheck"
	"github.com/longfair/longfair/ledger"
)

// FileName is the FSM's bbolt file inside the data directory.
const FileName = "fsm.db"

// Options configure Open.
type Options struct {
	// Dir is the data directory; the FSM keeps FileName there and creates
	// the directory if needed.
	Dir string
	// Logger receives the FSM's log lines; nil discards them.
	Logger *slog.Logger
	// RebuiltFromLog says that a Raft log and its snapshots hold every
	// entry this FSM applies, on disk, and that raft restores the latest
	// snapshot and replays the log into an FSM that is behind them (the
	// server sees to it: server.New). The FSM then commits without
	// syncing the disk, so a write waits for the log's syncs alone; in
	// exchange a state file that was not closed cleanly — a crash, or the
	// machine losing power, which can leave it stale or torn — is not
	// trusted: Open discards it and starts empty, to be rebuilt from the
	// log. A clean Close syncs the file and records that it did.
	RebuiltFromLog bool
	// noSync skips fsync on commit. Only tests set it: they check logic,
	// not durability, and would otherwise spend their time waiting on disks.
	noSync bool
	// noHistory records no fairness history: only the benchmark that
	// measures what recording it costs sets it.
	noHistory bool
}

// FSM is the replicated state machine. It is safe for concurrent use: raft
// applies on one goroutine while any number of readers call the read methods.
type FSM struct {
	log       *slog.Logger
	dir       string
	path      string
	noSync    bool
	noHistory bool

	// mu guards db and st. Applies and restores take it exclusively, reads
	// share it; a snapshot holds only its own bbolt read transaction.
	mu sync.RWMutex
	db *bolt.DB
	st *state
	// hook, when set (by tests), runs before each command is executed.
	hook func(Command)
	// broken is set when the store failed to commit a batch. The FSM then
	// refuses every later entry: it has fallen behind the log, and a restart
	// catches it up from the last batch it did commit.
	broken error

	// watchers are signalled after each committed batch (watch.go).
	watchMu  sync.Mutex
	watchers map[*Watcher]struct{}

	// aclGen is the tokens' generation (ACLGeneration in tokens_read.go).
	aclGen atomic.Uint64

	// integ is this replica's own record of its checkpoints (integrity.go).
	integ *integrity
}

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.BatchingFSM = (*FSM)(nil)
)

// Open opens (or creates) the FSM's state in opts.Dir and rebuilds the
// in-memory caches from it.
func Open(opts Options) (*FSM, error) {
	if opts.Dir == "" {
		return nil, errors.New("fsm: no data directory given: set Options.Dir")
	}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("fsm: create data directory: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	noSync := opts.noSync || opts.RebuiltFromLog
	f := &FSM{log: logger, dir: opts.Dir, path: filepath.Join(opts.Dir, FileName), noSync: noSync, noHistory: opts.noHistory, integ: newIntegrity(logger)}
	if opts.RebuiltFromLog {
		if err := f.discardUnclean(); err != nil {
			return nil, err
		}
	}
	db, st, err := openStore(f.path)
	if err != nil {
		return nil, err
	}
	db.NoSync = noSync
	f.install(db, st)
	if err := f.checkShutdownDigest(); err != nil {
		// Without its removal on disk, a crash could leave the record
		// vouching for commits that never reached the disk.
		db.Close()
		return nil, err
	}
	f.log.Info("fsm opened", "path", f.path, "applied_index", st.applied, "active_jobs", len(st.jobs), "journal_entries", st.su.Len())
	return f, nil
}

// DamagedStateRemedy is what an operator does about a damaged or diverged
// state file: the server's state is a copy of the group's, so it can be
// taken again from the others.
const DamagedStateRemedy = "stop this server, move its data dir aside (keep it for inspection) and start it again with an empty data dir joining the others: it rejoins and copies the state from the leader; if the whole group lost its state, restore a snapshot with 'longfair operator snapshot restore' into a fresh group"

// openStore opens a bbolt file, checks it, creates the buckets a new file
// lacks, and loads the state. A damaged file is refused with a
// *boltcheck.CorruptError naming it, never a panic.
func openStore(path string) (db *bolt.DB, st *state, err error) {
	if err := boltcheck.Precheck(path, DamagedStateRemedy); err != nil {
		return nil, nil, err
	}
	err = boltcheck.Guard(path, DamagedStateRemedy, func() error {
		var err error
		st, err = openStoreUnguarded(path, &db)
		return err
	})
	if err != nil && db != nil {
		db.Close()
		db = nil
	}
	return db, st, err
}

// openStoreUnguarded is openStore's work. It sets *out as soon as the file
// is open, so that openStore closes it whatever happens next.
func openStoreUnguarded(path string, out **bolt.DB) (*state, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: 5 * time.Second,
		// A large initial map keeps a long snapshot read from blocking
		// applies that grow the file (bbolt remaps under an exclusive lock).
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
		// NoFreelistSync stays off, unlike the Raft log's. It would be
		// safe — the applied index commits in the same transaction and
		// meta page either way, and bbolt rebuilds a missing freelist —
		// but it buys little and costs much here: the freelist is about
		// one page of a commit whose price is its two disk syncs, while
		// rebuilding it walks every page of the file at each open and
		// restore, and this file keeps every finished job and attempt
		// (loadState reads only the active ones, through their indexes).
	})
	if err != nil {
		return nil, fmt.Errorf("fsm: open %s: %w (is another server using this data directory?)", path, err)
	}
	*out = db
	// Every page is read once here, so that a damaged one is found now,
	// with a clear refusal, and not by a panic while serving: bbolt's
	// consistency check, in a read transaction, while the state loads in
	// another beside it. Each walks much of the file (the check every
	// page, the load the whole SU journal), so on two cores the check no
	// longer adds to a restore's or a start's time (0.3 s of 4.7 at 1M
	// attempts; the load is the longer). Precheck has already refused a file whose pages
	// would make either fault or loop; damage only the check sees (a page
	// both used and free, keys out of order) still refuses the file, and
	// what was loaded from it is dropped. Nothing is written before the
	// check has passed: a write allocates pages from the freelist it
	// checks.
	checked := make(chan error, 1)
	go func() {
		checked <- boltcheck.Guard(path, DamagedStateRemedy, func() error {
			return db.View(func(tx *bolt.Tx) error { return boltcheck.Check(tx, path, DamagedStateRemedy) })
		})
	}()
	var st *state
	loaded := false
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				// A new file, or one from before the bucket: loaded
				// below, once the bucket is made.
				return nil
			}
		}
		var err error
		st, err = loadState(tx)
		loaded = err == nil
		return err
	})
	if cerr := <-checked; cerr != nil {
		return nil, cerr
	}
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			fillAppended(tx)
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			meta := tx.Bucket(bucketMeta)
			if meta.Get(keySchema) == nil {
				if err := meta.Put(keySchema, u64(schemaVersion)); err != nil {
					return err
				}
			}
			if !loaded {
				var err error
				if st, err = loadState(tx); err != nil {
					return err
				}
			}
			return buildIndexes(tx, st.applied)
		})
	}
	if errors.Is(err, boltcheck.ErrCorrupt) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("fsm: load %s: %w", path, err)
	}
	return st, nil
}

// Close closes the bbolt file. The FSM must not be used afterwards.
func (f *FSM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return nil
	}
	if f.broken == nil {
		// Unsynced commits reach the disk before the record that says the
		// file is whole (Options.RebuiltFromLog).
		if err := f.db.Sync(); err != nil {
			f.log.Warn("fsm: could not sync the state file at shutdown; the next start rebuilds it from the log", "err", err)
		} else {
			f.recordShutdownDigest()
		}
	}
	err := f.db.Close()
	f.db = nil
	return err
}

// Err returns why the FSM stopped applying entries, or nil. A server that
// sees an error should shut down: restarting catches the FSM up from the log.
func (f *FSM) Err() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.broken
}

// AppliedIndex returns the index and term of the last entry the FSM has
// durably applied. After a restart raft re-sends entries after its latest
// snapshot; the FSM skips those at or below this index.
func (f *FSM) AppliedIndex() (index, term uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.applied, f.st.term
}

// Now returns the time of the last applied command (the leader's stamp,
// made non-decreasing).
func (f *FSM) Now() ledger.Time {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.now
}

// Result is what Apply returns for a command entry (raft hands it back as
// ApplyFuture.Response()). Err is an *Error when the command was refused;
// otherwise Value holds the command's result (see each command's doc and
// Response).
type Result struct {
	Index uint64
	Type  CommandType
	// Time is the time the command was applied at.
	Time  ledger.Time
	Value any
	Err   error
}

// Response unpacks an ApplyFuture's response: the command's result as a T,
// or its refusal.
func Response[T any](resp any) (T, error) {
	var zero T
	r, ok := resp.(*Result)
	if !ok || r == nil {
		return zero, fmt.Errorf("fsm: unexpected apply response %T", resp)
	}
	if r.Err != nil {
		return zero, r.Err
	}
	v, ok := r.Value.(T)
	if !ok {
		return zero, fmt.Errorf("fsm: %s result is %T, not %T", r.Type, r.Value, zero)
	}
	return v, nil
}

// Apply applies one committed entry; see ApplyBatch.
func (f *FSM) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in one bbolt transaction, which also
// records the last applied index. Entries at or below the recorded index
// were applied before a restart and are skipped (their response is nil).
// Every command entry gets a *Result (a multi-command entry gets Results,
// one per command); configuration entries get nil.
//
// A command that makes the FSM panic (a bug) must not take every server
// down in a loop: the batch is rolled back, the caches reloaded, and the
// batch applied again with that entry refused as Internal — on every server
// alike, since they all apply the same entries.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		for i, l := range logs {
			if l.Type == raft.LogCommand {
				out[i] = &Result{Index: l.Index, Err: errClosed}
			}
		}
		return out
	}
	poisoned := make(map[poisonKey]any)
	for f.broken == nil {
		bad, err := f.applyOnce(logs, out, poisoned)
		if err != nil {
			f.fail(err)
			break
		}
		if bad < 0 {
			f.noteACLChanges()
			f.notifyWatchers(logs)
			return out
		}
		f.reload()
	}
	clear(out)
	f.refuseAll(logs, out)
	return out
}

// applyOnce applies logs in one transaction. It returns the position of an
// entry that panicked (after rolling back), or -1 when the batch committed.
func (f *FSM) applyOnce(logs []*raft.Log, out []any, poisoned map[poisonKey]any) (int, error) {
	tx, err := f.db.Begin(true)
	if err != nil {
		return -1, fmt.Errorf("begin transaction: %w", err)
	}
	b := newBatch(tx, f.st, f.log, f.hook, f.integ)
	b.noHistory = f.noHistory
	applied := false
	for i, l := range logs {
		if l.Index <= f.st.applied {
			continue
		}
		if l.Type == raft.LogCommand && startsDigest(l.Data) {
			// A checkpoint digests the state before it: commit what the
			// batch applied so far, so a read transaction sees exactly the
			// entries before this one, and digest that off the apply path.
			if applied {
				if err := b.finish(); err != nil {
					_ = tx.Rollback()
					return -1, err
				}
				if err := tx.Commit(); err != nil {
					return -1, fmt.Errorf("commit before checkpoint %d: %w", l.Index, err)
				}
				f.st.su.KeepJournalIn(f.journalEntry)
				applied = false
			} else {
				_ = tx.Rollback()
			}
			f.integ.start(f.db, l.Index)
			if tx, err = f.db.Begin(true); err != nil {
				return -1, fmt.Errorf("begin transaction after checkpoint %d: %w", l.Index, err)
			}
			b = newBatch(tx, f.st, f.log, f.hook, f.integ)
			b.noHistory = f.noHistory
		}
		if l.Type == raft.LogCommand {
			res, panicked, err := b.applyEntry(l, i, poisoned)
			if panicked {
				_ = tx.Rollback()
				return i, nil
			}
			if err != nil {
				_ = tx.Rollback()
				return -1, fmt.Errorf("apply entry %d: %w", l.Index, err)
			}
			out[i] = res
		}
		f.st.applied, f.st.term = l.Index, l.Term
		applied = true
	}
	if !applied {
		_ = tx.Rollback()
		return -1, nil
	}
	if err := b.finish(); err != nil {
		_ = tx.Rollback()
		return -1, err
	}
	if err := tx.Commit(); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	f.st.su.KeepJournalIn(f.journalEntry)
	return -1, nil
}

// install makes st, loaded from db, the FSM's state. Its SU book does not
// hold the journal entries the state file holds: it reads them back
// through journalEntry, only to answer a retry.
func (f *FSM) install(db *bolt.DB, st *state) {
	f.db, f.st = db, st
	st.su.KeepJournalIn(f.journalEntry)
}

// journalEntry reads SU journal entry seq as committed to the state file.
// The SU book asks for entries it has let go of while the FSM applies a
// batch, under f.mu: the read transaction it opens is closed before the
// batch's write transaction goes on, which bbolt allows.
func (f *FSM) journalEntry(seq uint64) ([]byte, error) {
	var data []byte
	err := f.db.View(func(tx *bolt.Tx) error {
		var err error
		data, err = journalReader(tx.Bucket(bucketJournal))(seq)
		return err
	})
	return data, err
}

// reload rebuilds the caches from the last committed state, after a batch
// was rolled back. If that fails the FSM is broken.
func (f *FSM) reload() {
	err := f.db.View(func(tx *bolt.Tx) error {
		st, err := loadState(tx)
		if err == nil {
			f.install(f.db, st)
		}
		return err
	})
	f.aclGen.Add(1)
	if err != nil {
		f.fail(fmt.Errorf("reload the state after a rolled-back batch: %w", err))
	}
}

// refuseAll answers every command entry with the FSM's failure.
func (f *FSM) refuseAll(logs []*raft.Log, out []any) {
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = &Result{Index: l.Index, Err: refuse(KindUnavailable,
				"this server's state store failed (%v) and it no longer applies commands: restart it to catch up from the log", f.broken)}
		}
	}
}

// fail marks the FSM broken and reloads the caches from the last committed
// state, so reads stay consistent with the file.
func (f *FSM) fail(err error) {
	f.broken = err
	f.log.Error("fsm stopped applying: the state store failed; restart this server", "err", err)
	if err := f.db.View(func(tx *bolt.Tx) error {
		st, err := loadState(tx)
		if err == nil {
			f.install(f.db, st)
		}
		return err
	}); err != nil {
		f.log.Error("fsm could not reload its state after the failure", "err", err)
	}
}
