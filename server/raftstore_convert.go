package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/migrate"

	"github.com/longfair/longfair/internal/durable"
)

// ConvertedLog is what ConvertLogStore did.
type ConvertedLog struct {
	From, To string
	// First and Last are the log's first and last index (0 for an empty
	// log); Term is Raft's current term, copied with the vote.
	First, Last, Term uint64
	// Backup is where the log in the old store was moved: it is no longer
	// read, and may be deleted once the server runs on the new one.
	Backup string
}

// ConvertLogStore copies a stopped server's Raft log, and Raft's term and
// vote, from the log store its data dir holds into the store to, so that
// the server can start with --raft-log-store to and keep everything it
// had acknowledged, without copying the state from the leader again. The
// snapshots and the state file are not touched.
//
// It is safe to interrupt and run again: the new store is written under
// a temporary name and put in place only when it holds every entry; the
// old one is then moved aside (never deleted), and a run that finds no
// log, that moved-aside one and the new one under its temporary name
// converts again from the old one.
func ConvertLogStore(ctx context.Context, dataDir, to string, logger *slog.Logger) (ConvertedLog, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if !slices.Contains(LogStores(), to) {
		return ConvertedLog{}, fmt.Errorf("log store %q: convert to %q or %q", to, LogStoreBoltDB, LogStoreWAL)
	}
	dir := filepath.Join(dataDir, "raft")
	if _, err := os.Stat(dir); err != nil {
		return ConvertedLog{}, fmt.Errorf("no Raft directory in %s (is --data-dir the server's data dir?): %w", dataDir, err)
	}
	// The server's own lock on its Raft directory: no server runs on it
	// while this does, and none starts until it is done.
	unlock, err := lockDir(dir)
	if errors.Is(err, errLogLocked) {
		return ConvertedLog{}, fmt.Errorf("%w (stop the server before converting its log)", err)
	}
	if err != nil {
		return ConvertedLog{}, err
	}
	defer unlock()
	from, err := logStoreOnDisk(dir)
	if err != nil {
		return ConvertedLog{}, err
	}
	// Each store's file or directory; the old one's name once moved
	// aside, and the new one's while it is written.
	storeName := map[string]string{LogStoreBoltDB: boltLogFile, LogStoreWAL: walLogDir}
	other := map[string]string{LogStoreBoltDB: LogStoreWAL, LogStoreWAL: LogStoreBoltDB}[to]
	backup := filepath.Join(dir, storeName[other]+".before-"+to)
	tmp := filepath.Join(dir, storeName[to]+".converting")
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }
	srcPath := ""
	switch {
	case from == to:
		return ConvertedLog{}, fmt.Errorf("the Raft log in %s is already in %s: nothing to convert; start the server with --raft-log-store %s", dir, to, to)
	case from != "" && exists(backup):
		return ConvertedLog{}, fmt.Errorf("%s holds the log an earlier conversion moved aside (the server runs on the %s log now): remove it and run again", backup, from)
	case from == "" && exists(backup) && exists(tmp):
		// A run stopped between moving the old log aside and putting the
		// new one in place: convert again from the old one.
		from, srcPath = other, backup
	case from == "" && exists(backup):
		return ConvertedLog{}, fmt.Errorf("no Raft log in %s; %s is the log an earlier conversion moved aside, which is not used on its own: if it is the log this server last ran on, move it back to %s and run again", dir, backup, storeName[other])
	case from == "":
		return ConvertedLog{}, fmt.Errorf("no Raft log in %s to convert (is --data-dir the server's data dir?)", dir)
	}
	res := ConvertedLog{From: from, To: to, Backup: backup}

	src, err := openLogStore(dir, from, srcPath, true, logger)
	if errors.Is(err, errLogLocked) {
		return res, fmt.Errorf("open the %s log: %w (stop the server before converting its log)", from, err)
	}
	if err != nil {
		return res, fmt.Errorf("open the %s log: %w", from, err)
	}
	closeSrc := sync.OnceValue(src.closer)
	defer closeSrc()
	if err := os.RemoveAll(tmp); err != nil {
		return res, fmt.Errorf("remove what an interrupted conversion left: %w", err)
	}
	if to == LogStoreWAL {
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return res, fmt.Errorf("create %s: %w", tmp, err)
		}
	}
	dst, err := openLogStore(dir, to, tmp, false, logger)
	if err != nil {
		return res, fmt.Errorf("create the %s log: %w", to, err)
	}
	copyErr := copyLog(ctx, dst, src, &res)
	if err := errors.Join(copyErr, dst.closer()); err != nil {
		os.RemoveAll(tmp)
		return res, fmt.Errorf("convert the Raft log in %s from %s to %s: %w", dir, from, to, err)
	}
	// The new log's name is on disk before the old one is moved aside,
	// and each rename before the next: after a crash the directory holds
	// the old log, or the old one moved aside and the new one under its
	// temporary name (a run to finish), or the new one in place.
	if err := durable.SyncDir(dir); err != nil {
		return res, err
	}
	if err := closeSrc(); err != nil {
		return res, fmt.Errorf("close the %s log: %w", from, err)
	}
	if srcPath == "" {
		if err := os.Rename(filepath.Join(dir, storeName[from]), backup); err != nil {
			return res, fmt.Errorf("move the %s log aside: %w", from, err)
		}
		if err := durable.SyncDir(dir); err != nil {
			return res, err
		}
	}
	// An empty wal/ left by a failed first start holds no log
	// (logStoreOnDisk), and a directory is renamed only over an empty one.
	if err := os.RemoveAll(filepath.Join(dir, storeName[to])); err != nil {
		return res, fmt.Errorf("remove the empty %s: %w", storeName[to], err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, storeName[to])); err != nil {
		return res, fmt.Errorf("put the %s log in place: %w (run the conversion again)", to, err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return res, err
	}
	return res, nil
}

// copyLog copies every entry and Raft's term and vote from src to dst,
// and checks that dst ends where src does.
func copyLog(ctx context.Context, dst, src *raftStores, res *ConvertedLog) error {
	var err error
	if res.First, err = src.logs.FirstIndex(); err != nil {
		return err
	}
	if res.Last, err = src.logs.LastIndex(); err != nil {
		return err
	}
	if res.Last > 0 {
		if err := migrate.CopyLogs(ctx, dst.logs, src.logs, 1<<20, nil); err != nil {
			return err
		}
	}
	if err := copyStable(dst.stable, src.stable); err != nil {
		return err
	}
	if res.Term, err = src.stable.GetUint64([]byte("CurrentTerm")); err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return err
	}
	first, _ := dst.logs.FirstIndex()
	last, _ := dst.logs.LastIndex()
	term, _ := dst.stable.GetUint64([]byte("CurrentTerm")) // 0 when unset, as res.Term
	if first != res.First || last != res.Last || term != res.Term {
		return fmt.Errorf("the copy holds entries %d–%d of term %d, the original %d–%d of term %d", first, last, term, res.First, res.Last, res.Term)
	}
	var entry raft.Log
	if res.Last > 0 {
		if err := dst.logs.GetLog(res.Last, &entry); err != nil {
			return fmt.Errorf("read back entry %d: %w", res.Last, err)
		}
	}
	return nil
}

// copyStable copies the values hashicorp/raft keeps in the stable store
// (raft.go): its term, and the term and candidate of its last vote.
// raft-wal's migrate.CopyStable would stop at a key raft-boltdb never
// stored (a server that never voted has no vote): such a key stays unset.
func copyStable(dst, src raft.StableStore) error {
	for _, k := range []string{"CurrentTerm", "LastVoteTerm"} {
		v, err := src.GetUint64([]byte(k))
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", k, err)
		}
		if err := dst.SetUint64([]byte(k), v); err != nil {
			return fmt.Errorf("write %s: %w", k, err)
		}
	}
	for _, k := range []string{"LastVoteCand"} {
		v, err := src.Get([]byte(k))
		if errors.Is(err, raftboltdb.ErrKeyNotFound) || (err == nil && v == nil) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", k, err)
		}
		if err := dst.Set([]byte(k), v); err != nil {
			return fmt.Errorf("write %s: %w", k, err)
		}
	}
	return nil
}
