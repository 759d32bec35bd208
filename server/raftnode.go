package server

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

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
