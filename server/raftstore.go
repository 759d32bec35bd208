package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	walmetadb "github.com/hashicorp/raft-wal/metadb"
	walsegment "github.com/hashicorp/raft-wal/segment"
	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/boltcheck"
)

// The Raft log stores a server can keep its log in (RaftConfig.LogStore).
const (
	// LogStoreBoltDB is raft-boltdb/v2: one bbolt file, raft.db. Each
	// append is a bbolt commit of two disk syncs. The default.
	LogStoreBoltDB = "boltdb"
	// LogStoreWAL is hashicorp/raft-wal: segment files of appended
	// entries, and a small bbolt file for its metadata and Raft's stable
	// values, in wal/. Each append is one disk sync, so a commit, which
	// waits for the leader's append and then a follower's, waits for two
	// syncs instead of four. raft-wal calls itself experimental; Consul
	// offers it as an option, as longfair does.
	LogStoreWAL = "wal"
)

// LogStores are the log stores a server can keep its log in, the
// default first.
func LogStores() []string { return []string{LogStoreBoltDB, LogStoreWAL} }

// raftStores are the on-disk parts of the Raft node: the log, the stable
// store (Raft's term and vote) and the snapshot directory.
type raftStores struct {
	logs   raft.LogStore // the log behind a cache of recent entries
	stable raft.StableStore
	snaps  *raft.FileSnapshotStore
	bolt   *raftboltdb.BoltStore // boltdb: the log and stable store; else nil
	closer func() error          // closes the log and stable store
}

// logCacheEntries keeps the most recent log entries in memory, so
// replicating to followers rarely reads the log back from disk.
const logCacheEntries = 1024

// The names a log store leaves in the Raft directory, by which a data
// dir's store is known.
const (
	boltLogFile = "raft.db"
	walLogDir   = "wal"
)

// openRaftStores opens the Raft directory dir of a server: its log in
// the store kind, and its snapshots. The server holds the directory's
// lock until it closes the stores, so that 'longfair convert-log', which
// takes the same lock, never runs beside it.
func openRaftStores(dir, kind string, retain int, logger *slog.Logger) (*raftStores, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkLogStoreKind(dir, kind); err != nil {
		unlock()
		return nil, err
	}
	st, err := openLogStore(dir, kind, "", false, logger)
	if err != nil {
		unlock()
		return nil, err
	}
	closeLog := st.closer
	st.closer = func() error {
		err := closeLog()
		unlock()
		return err
	}
	if st.logs, err = raft.NewLogCache(logCacheEntries, st.logs); err != nil {
		st.closer()
		return nil, fmt.Errorf("raft log cache: %w", err)
	}
	if st.snaps, err = raft.NewFileSnapshotStoreWithLogger(dir, retain, newHclog(logger, "raft-snapshot")); err != nil {
		st.closer()
		return nil, fmt.Errorf("open raft snapshot store in %s: %w", dir, err)
	}
	return st, nil
}

// checkLogStoreKind refuses a configured log store other than the one
// the data dir already holds its log in: the other would start empty,
// and a server with an empty log but a state and snapshots could vote
// and acknowledge as if it had lost what it had acknowledged before. For
// the same reason, with no log in place, it refuses a directory holding
// snapshots, a state file beside it, or what an interrupted 'longfair
// convert-log' left (which it finishes when run again).
func checkLogStoreKind(dir, kind string) error {
	have, err := logStoreOnDisk(dir)
	if err != nil {
		return err
	}
	if have != "" && have != kind {
		return fmt.Errorf("this data dir keeps its Raft log in %s, but the log store asked for is %s: start the server with --raft-log-store %s (raft.log_store), or convert the log while the server is stopped with 'longfair convert-log --data-dir %s --to %s'",
			have, kind, have, filepath.Dir(dir), kind)
	}
	if have != "" {
		return nil
	}
	if left := conversionLeftovers(dir); len(left) > 0 {
		return fmt.Errorf("raft directory %s holds no Raft log but %s: a 'longfair convert-log' was interrupted; run it again with the same --to before starting the server", dir, strings.Join(left, " and "))
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "meta.json"))
	if len(snaps) > 0 {
		return &boltcheck.CorruptError{Path: dir, Problem: "it holds Raft snapshots but no Raft log", Remedy: raftLogRemedy}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "fsm", fsm.FileName)); err == nil {
		return &boltcheck.CorruptError{Path: dir, Problem: "it holds no Raft log, but the server's state (fsm/" + fsm.FileName + ") is there", Remedy: raftLogRemedy}
	}
	return nil
}

// conversionLeftovers are the names an interrupted 'longfair convert-log'
// leaves in the Raft directory: a log moved aside, a new one not yet in
// place.
func conversionLeftovers(dir string) []string {
	var left []string
	for _, pattern := range []string{"*.before-*", "*.converting"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, p := range m {
			left = append(left, filepath.Base(p))
		}
	}
	return left
}

// logStoreOnDisk is the log store whose files the Raft directory holds:
// LogStoreBoltDB, LogStoreWAL, or "" for none. It refuses both at once,
// and raft-wal's segments without the metadata file that lists them
// (raft-wal would delete them and start empty).
func logStoreOnDisk(dir string) (string, error) {
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}
	walMeta := exists(filepath.Join(dir, walLogDir, walmetadb.FileName))
	segments, _ := filepath.Glob(filepath.Join(dir, walLogDir, "*.wal"))
	if len(segments) > 0 && !walMeta {
		return "", &boltcheck.CorruptError{Path: filepath.Join(dir, walLogDir), Problem: fmt.Sprintf("%d raft-wal segment files but no %s listing them", len(segments), walmetadb.FileName), Remedy: raftLogRemedy}
	}
	bolt := exists(filepath.Join(dir, boltLogFile))
	switch {
	case bolt && walMeta:
		return "", fmt.Errorf("raft directory %s holds both a %s log (%s) and a %s log (%s/): one of them was not made by this server; %s",
			dir, LogStoreBoltDB, boltLogFile, LogStoreWAL, walLogDir, raftLogRemedy)
	case bolt:
		return LogStoreBoltDB, nil
	case walMeta:
		return LogStoreWAL, nil
	}
	return "", nil
}

// openLogStore opens the log and stable store of kind in the Raft
// directory dir, at path if it is not "" (a file for boltdb, a directory
// for wal), else at the store's own name there. readOnly is for a log
// that will only be read (a conversion's source): a wal log that can no
// longer be appended to (checkWALTail) is still read whole.
func openLogStore(dir, kind, path string, readOnly bool, logger *slog.Logger) (*raftStores, error) {
	if kind == LogStoreWAL {
		if path == "" {
			path = filepath.Join(dir, walLogDir)
		}
		return openWALLog(path, readOnly, logger)
	}
	if path == "" {
		path = filepath.Join(dir, boltLogFile)
	}
	return openBoltLog(path)
}

// openBoltLog opens raft-boltdb's one file, the log and stable store.
func openBoltLog(path string) (*raftStores, error) {
	if err := checkBoltFile(path); err != nil {
		return nil, err
	}
	bolt, err := raftboltdb.New(raftboltdb.Options{
		Path: path,
		// Without a timeout a second server on the same data dir would
		// hang on bbolt's file lock instead of saying what is wrong.
		BoltOptions: &bbolt.Options{
			Timeout: time.Second,
			// Every append is a bbolt commit with its own disk syncs, and
			// those syncs are what a write waits for. Not writing the
			// freelist on each commit makes them smaller; bbolt rebuilds
			// the freelist when it opens the file, as etcd does.
			NoFreelistSync: true,
			FreelistType:   bbolt.FreelistMapType,
		},
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, lockedError(path)
		}
		return nil, fmt.Errorf("open raft log %s: %w", path, err)
	}
	return &raftStores{logs: bolt, stable: bolt, bolt: bolt, closer: bolt.Close}, nil
}

// openWALLog opens raft-wal in its own directory. raft-wal opens its
// metadata file, a bbolt file, with no lock timeout: the caller holds the
// Raft directory's lock (openRaftStores, ConvertLogStore), which tells a
// second server on the same data dir that it is not alone instead of
// leaving it hanging there.
func openWALLog(walDir string, readOnly bool, logger *slog.Logger) (*raftStores, error) {
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft log directory: %w", err)
	}
	if err := checkBoltFile(filepath.Join(walDir, walmetadb.FileName)); err != nil {
		return nil, err
	}
	var w *wal.WAL
	err := boltcheck.Guard(walDir, raftLogRemedy, func() (err error) {
		// Inside the guard too: raft-wal reads its metadata trusting it.
		if !readOnly {
			if err := checkWALTail(walDir); err != nil {
				return err
			}
		}
		w, err = wal.Open(walDir, wal.WithLogger(newHclog(logger, "raft-wal")), wal.WithMetricsCollector(walMetrics{}))
		if err != nil {
			if errors.Is(err, wal.ErrCorrupt) {
				return &boltcheck.CorruptError{Path: walDir, Problem: err.Error(), Remedy: raftLogRemedy}
			}
			return fmt.Errorf("open raft log %s: %w", walDir, err)
		}
		if err := readWholeLog(w, walDir); err != nil {
			w.Close()
			return err
		}
		return nil
	})
	if err != nil {
		// raft-wal v0.4.2 leaves its metadata file open when Open fails
		// part-way, so in this process a second try would hang on it; a
		// server exits on this error anyway.
		return nil, err
	}
	return &raftStores{logs: w, stable: w, closer: w.Close}, nil
}

// checkWALTail refuses a raft-wal log whose last segment is sealed on disk
// while its metadata still lists it as the open one: raft-wal v0.4.2 seals
// a full segment as part of an append and records the switch to the next
// one afterwards, in the background, so a stop or crash between the two
// leaves a log that opens but refuses every append ("segment is sealed")
// for good. Such a server would never catch up; it is told what to do
// instead. It reads with raft-wal's own metadata and segment code.
func checkWALTail(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, walmetadb.FileName)); err != nil {
		return nil // a new log; raft-wal creates it
	}
	var meta walmetadb.BoltMetaDB
	defer meta.Close() // also when Load fails after opening the file
	state, err := meta.Load(dir)
	if err != nil {
		return &boltcheck.CorruptError{Path: filepath.Join(dir, walmetadb.FileName), Problem: err.Error(), Remedy: raftLogRemedy}
	}
	if len(state.Segments) == 0 {
		return nil
	}
	tail := state.Segments[len(state.Segments)-1]
	if !tail.SealTime.IsZero() {
		return nil
	}
	sw, err := walsegment.NewFiler(dir, walfs.New()).RecoverTail(tail)
	if errors.Is(err, os.ErrNotExist) {
		return nil // raft-wal recreates a tail lost before its first sync
	}
	if err != nil {
		return &boltcheck.CorruptError{Path: filepath.Join(dir, walsegment.FileName(tail)), Problem: err.Error(), Remedy: raftLogRemedy}
	}
	defer sw.Close()
	sealed, _, err := sw.Sealed()
	if err != nil {
		return &boltcheck.CorruptError{Path: filepath.Join(dir, walsegment.FileName(tail)), Problem: err.Error(), Remedy: raftLogRemedy}
	}
	if sealed {
		return &boltcheck.CorruptError{
			Path:    filepath.Join(dir, walsegment.FileName(tail)),
			Problem: "its last segment is sealed, or its seal was torn, but the switch to the next one was never recorded (a stop during raft-wal's segment switch), so no entry can be appended",
			Remedy: fmt.Sprintf("the log itself is whole: convert it with 'longfair convert-log --data-dir %s --to boltdb', which keeps every entry (and back with --to wal if you want), then start the server with the store it is in; or %s",
				filepath.Dir(filepath.Dir(dir)), raftLogRemedy),
		}
	}
	return nil
}

// readWholeLog reads every entry of the log once. raft-wal checks a
// sealed segment's frames only as it reads them (their headers and
// encoding: it keeps no checksum of a sealed entry's bytes), and
// hashicorp/raft panics on an entry it cannot read at start-up; reading
// them first turns such damage into a refusal that says what to do. An
// entry that decodes under another index means a damaged segment index.
// The log holds the entries since the last snapshot (about 20,000 by
// default: 0.13 s to read here).
func readWholeLog(w *wal.WAL, dir string) error {
	first, err := w.FirstIndex()
	if err != nil {
		return fmt.Errorf("read raft log %s: %w", dir, err)
	}
	last, err := w.LastIndex()
	if err != nil {
		return fmt.Errorf("read raft log %s: %w", dir, err)
	}
	var entry raft.Log
	for i := first; i > 0 && i <= last; i++ {
		if err := w.GetLog(i, &entry); err != nil {
			return &boltcheck.CorruptError{Path: dir, Problem: fmt.Sprintf("entry %d of %d–%d cannot be read: %v", i, first, last, err), Remedy: raftLogRemedy}
		}
		if entry.Index != i {
			return &boltcheck.CorruptError{Path: dir, Problem: fmt.Sprintf("entry %d of %d–%d reads back as entry %d", i, first, last, entry.Index), Remedy: raftLogRemedy}
		}
	}
	return nil
}

// lockDir takes an exclusive lock on a file in dir, held until the
// returned function runs (or the process ends).
func lockDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open raft log lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(dir)
		}
		return nil, fmt.Errorf("lock raft log %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

func lockedError(path string) error {
	return fmt.Errorf("open raft log %s: %w", path, errLogLocked)
}

// errLogLocked is a Raft log another process has open.
var errLogLocked = errors.New("it is locked by another process; is another server running on this data dir?")

// raftLogRemedy is what to do about a damaged Raft log. A server's log is
// a copy of the group's, so wiping the data dir and rejoining rebuilds it.
const raftLogRemedy = "stop this server, move its data dir aside (keep it for inspection) and start it again with an empty data dir joining the others: it rejoins and copies the log and state from the leader; if it was the last server of its group, restore a snapshot with 'longfair operator snapshot restore' into a fresh group"

// checkBoltFile refuses a damaged bbolt file of the Raft log (raft.db, or
// raft-wal's metadata) before the library opens it: a truncated file
// would fault inside bbolt and a damaged page would panic. It opens the
// file read-only and runs bbolt's consistency check, which reads every
// page; raft.db holds only the entries since the last snapshot, and
// raft-wal's metadata a few keys, so this is quick.
func checkBoltFile(path string) error {
	if err := boltcheck.Precheck(path, raftLogRemedy); err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return boltcheck.Guard(path, raftLogRemedy, func() error {
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			if errors.Is(err, bolterrors.ErrTimeout) {
				return lockedError(path)
			}
			return &boltcheck.CorruptError{Path: path, Problem: err.Error(), Remedy: raftLogRemedy}
		}
		defer db.Close()
		return db.View(func(tx *bbolt.Tx) error { return boltcheck.Check(tx, path, raftLogRemedy) })
	})
}

// hasState reports whether this data dir already belongs to a Raft group;
// such a server never bootstraps again.
func (st *raftStores) hasState() (bool, error) {
	ok, err := raft.HasExistingState(st.logs, st.stable, st.snaps)
	if err != nil {
		return false, fmt.Errorf("inspect raft state: %w", err)
	}
	return ok, nil
}

func (st *raftStores) close() error { return st.closer() }

// runMetrics reports the log store's statistics through go-metrics until
// ctx ends: raft-boltdb's page and transaction figures every interval.
// raft-wal reports its own as it goes (walMetrics).
func (st *raftStores) runMetrics(ctx context.Context, interval time.Duration) {
	if st.bolt != nil {
		st.bolt.RunMetrics(ctx, interval)
	}
}

// walMetrics passes raft-wal's counters and gauges to go-metrics, under
// raft.wal, as hashicorp/raft's own go there (ops/metrics shows them). It
// asks for go-metrics' sink at each call, so a sink set after the log was
// opened still gets them.
type walMetrics struct{}

func (walMetrics) IncrementCounter(name string, delta uint64) {
	gometrics.IncrCounter([]string{"raft", "wal", name}, float32(delta))
}

func (walMetrics) SetGauge(name string, val uint64) {
	gometrics.SetGauge([]string{"raft", "wal", name}, float32(val))
}

// latestSnapshot is the index of the newest snapshot in the store, 0 when
// there is none.
func (st *raftStores) latestSnapshot() (uint64, error) {
	snaps, err := st.snaps.List()
	if err != nil {
		return 0, fmt.Errorf("list raft snapshots: %w", err)
	}
	if len(snaps) == 0 {
		return 0, nil
	}
	return snaps[0].Index, nil
}
