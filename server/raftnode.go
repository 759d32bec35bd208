package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/longfair/longfair/internal/boltcheck"
)

// raftStores are the on-disk parts of the Raft node: the log and stable
// store (one raft-boltdb file) and the snapshot directory.
type raftStores struct {
	bolt  *raftboltdb.BoltStore
	logs  raft.LogStore // bolt behind a cache of recent entries
	snaps *raft.FileSnapshotStore
}

// logCacheEntries keeps the most recent log entries in memory, so
// replicating to followers rarely reads the log back from disk.
const logCacheEntries = 1024

func openRaftStores(dir string, retain int, logger *slog.Logger) (*raftStores, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft directory: %w", err)
	}
	path := filepath.Join(dir, "raft.db")
	if err := checkRaftLog(path); err != nil {
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
			return nil, fmt.Errorf("open raft log %s: it is locked by another process; is another server running on this data dir?", path)
		}
		return nil, fmt.Errorf("open raft log %s: %w", path, err)
	}
	logs, err := raft.NewLogCache(logCacheEntries, bolt)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("raft log cache: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, retain, newHclog(logger, "raft-snapshot"))
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("open raft snapshot store in %s: %w", dir, err)
	}
	return &raftStores{bolt: bolt, logs: logs, snaps: snaps}, nil
}

// raftLogRemedy is what to do about a damaged Raft log. A server's log is
// a copy of the group's, so wiping the data dir and rejoining rebuilds it.
const raftLogRemedy = "stop this server, move its data dir aside (keep it for inspection) and start it again with an empty data dir joining the others: it rejoins and copies the log and state from the leader; if it was the last server of its group, restore a snapshot with 'longfair operator snapshot restore' into a fresh group"

// checkRaftLog refuses a damaged raft.db before raft-boltdb opens it: a
// truncated file would fault inside bbolt and a damaged page would panic.
// It opens the file read-only and runs bbolt's consistency check, which
// reads every page; the log holds only the entries since the last
// snapshot, so this is quick.
func checkRaftLog(path string) error {
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
				return fmt.Errorf("open raft log %s: it is locked by another process; is another server running on this data dir?", path)
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
	ok, err := raft.HasExistingState(st.logs, st.bolt, st.snaps)
	if err != nil {
		return false, fmt.Errorf("inspect raft state: %w", err)
	}
	return ok, nil
}

func (st *raftStores) close() error { return st.bolt.Close() }

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

// raftConfig builds hashicorp/raft's configuration from ours. restore
// says whether raft must restore the latest snapshot into the FSM at start
// (the FSM is behind it: server.New).
func raftConfig(cfg Config, notify chan<- bool, restore bool, logger *slog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.HeartbeatTimeout = time.Duration(cfg.Raft.HeartbeatTimeout)
	rc.ElectionTimeout = time.Duration(cfg.Raft.ElectionTimeout)
	rc.LeaderLeaseTimeout = time.Duration(cfg.Raft.LeaderLeaseTimeout)
	rc.CommitTimeout = time.Duration(cfg.Raft.CommitTimeout)
	rc.MaxAppendEntries = cfg.Raft.MaxAppendEntries
	rc.SnapshotInterval = time.Duration(cfg.Raft.SnapshotInterval)
	rc.SnapshotThreshold = cfg.Raft.SnapshotThreshold
	rc.TrailingLogs = cfg.Raft.TrailingLogs
	// The FSM keeps its state in its own bbolt file together with the
	// last applied index, so a restart resumes from there instead of
	// loading the latest snapshot and replaying the log after it — unless
	// the FSM is behind the snapshot, as after a crash, when it starts
	// empty (fsm.Options.RebuiltFromLog).
	rc.NoSnapshotRestoreOnStart = !restore
	rc.NotifyCh = notify
	// Let proposals queue up for the leader loop instead of each handing
	// its entry over in turn, so one disk sync covers more of them.
	rc.BatchApplyCh = true
	rc.Logger = newHclog(logger, "raft")
	return rc
}

// newTransport binds the Raft TCP transport, over TLS when the server
// has TLS.
func newTransport(cfg Config, sec transportSecurity, logger *slog.Logger) (*raft.NetworkTransport, error) {
	var advertise net.Addr
	if cfg.RaftAdvertise != "" {
		a, err := net.ResolveTCPAddr("tcp", cfg.RaftAdvertise)
		if err != nil {
			return nil, fmt.Errorf("raft advertise address %q: %w", cfg.RaftAdvertise, err)
		}
		advertise = a
	}
	netCfg := &raft.NetworkTransportConfig{
		MaxPool: 3,
		Timeout: 10 * time.Second,
		Logger:  newHclog(logger, "raft-net"),
	}
	if sec.tls {
		return newTLSTransport(cfg, advertise, sec, netCfg)
	}
	t, err := raft.NewTCPTransportWithConfig(cfg.RaftAddr, advertise, netCfg)
	if err != nil {
		return nil, fmt.Errorf("listen for raft on %s: %w (is the port in use? pick another with --raft-addr)", cfg.RaftAddr, err)
	}
	return t, nil
}
