package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ops/metrics"
)

// Server is one member of the server group. Create it with New, run it
// with Start and stop it with Shutdown.
type Server struct {
	cfg    Config
	logger *slog.Logger

	fsm      *fsm.FSM
	stores   *raftStores
	hadState bool // the data dir held Raft state when the server opened it
	// restoreOnStart: the FSM was behind the latest snapshot when the
	// server opened it, so raft restores the snapshot at start.
	restoreOnStart bool

	raft      *raft.Raft
	transport *raft.NetworkTransport
	gossip    *gossip
	grpc      *grpc.Server
	grpcLis   net.Listener
	grpcAddr  string
	fwd       *forwarder
	leaders   leaderWatch
	hub       workerHub        // the leader's work with workers (leader_term.go)
	metrics   *metrics.Metrics // metrics.go
	http      *httpEndpoint    // http.go: /metrics, /healthz, /readyz

	failed chan error // see Failed

	// proposals lets concurrent proposals share Raft entries (propose_group.go).
	proposals groupCommit

	// sec secures the connections (tls.go); auth resolves tokens (auth.go).
	sec  transportSecurity
	auth *authenticator

	// leaderReady is set while this server leads and has applied
	// everything committed before it took over.
	leaderReady atomic.Bool

	// The state check (integrity.go): checkMu serializes rounds, lastCheck
	// is the index of the last entry a round committed, steppingDown is
	// set while a diverged leader hands leadership over.
	checkMu      sync.Mutex
	lastCheck    atomic.Uint64
	steppingDown atomic.Bool

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  bool
	stopOnce sync.Once
	stopErr  error
}

// New checks the configuration and opens the data dir: the FSM's database,
// the Raft log and the snapshot store. Nothing listens until Start.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid server configuration: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("node_id", cfg.NodeID)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := claimNodeID(cfg.DataDir, cfg.NodeID); err != nil {
		return nil, err
	}
	// The Raft log is opened first: its lock wait is short, so a second
	// server on the same data dir is told so within a second.
	stores, err := openRaftStores(filepath.Join(cfg.DataDir, "raft"), cfg.Raft.LogStore, cfg.Raft.SnapshotsRetained, logger)
	if err != nil {
		return nil, err
	}
	had, err := stores.hasState()
	if err != nil {
		stores.close()
		return nil, err
	}
	// The FSM commits without syncing the disk: the Raft log holds every
	// entry durably, and an FSM that was not closed cleanly starts empty
	// and is rebuilt from the latest snapshot and the log after it.
	f, err := fsm.Open(fsm.Options{Dir: filepath.Join(cfg.DataDir, "fsm"), Logger: logger.With("component", "fsm"), RebuiltFromLog: true})
	if err != nil {
		stores.close()
		return nil, fmt.Errorf("open state in %s: %w", cfg.DataDir, err)
	}
	latest, err := stores.latestSnapshot()
	if err != nil {
		f.Close()
		stores.close()
		return nil, err
	}
	applied, _ := f.AppliedIndex()
	s := &Server{cfg: cfg, logger: logger, fsm: f, stores: stores, hadState: had, restoreOnStart: applied < latest, fwd: newForwarder(), failed: make(chan error, 1)}
	if s.restoreOnStart {
		logger.Warn("the state is behind the latest snapshot; raft restores it and replays the log after it", "applied_index", applied, "snapshot_index", latest)
	}
	if s.metrics, err = newServerMetrics(s); err != nil {
		f.Close()
		stores.close()
		return nil, err
	}
	return s, nil
}

// nodeIDFile records which node id a data dir belongs to. A server's Raft
// identity must not change under its log, so a different --node-id on the
// same data dir is refused instead of silently joining as someone else.
const nodeIDFile = "node-id"

func claimNodeID(dir, id string) error {
	path := filepath.Join(dir, nodeIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if have := strings.TrimSpace(string(b)); have != id {
			return fmt.Errorf("data dir %s belongs to node %q, not %q: start with --node-id %s, or use another data dir", dir, have, id, have)
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
			return fmt.Errorf("record node id in data dir: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("read node id of data dir: %w", err)
	}
}

// Start binds the Raft, gRPC and gossip listeners, starts Raft and begins
// joining the gossip pool in the background. ctx bounds the start-up only;
// the server runs until Shutdown.
func (s *Server) Start(ctx context.Context) (err error) {
	if s.started {
		return errors.New("server already started")
	}
	s.started = true
	if err := ctx.Err(); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	defer func() {
		if err != nil {
			s.Shutdown(context.Background())
		}
	}()

	if s.sec, err = newTransportSecurity(s.cfg); err != nil {
		return err
	}
	s.fwd.setCredentials(s.sec.dialCreds)
	s.auth = newAuthenticator(s.fsm)
	s.auth.mungeSocket = s.cfg.ACL.MungeSocket
	if s.transport, err = newTransport(s.cfg, s.sec, s.logger); err != nil {
		return err
	}
	notify := make(chan bool, 16)
	s.raft, err = raft.NewRaft(raftConfig(s.cfg, notify, s.restoreOnStart, s.logger), s.fsm, s.stores.logs, s.stores.stable, s.stores.snaps, s.transport)
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	if s.cfg.Bootstrap && !s.hadState {
		conf := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter, ID: raft.ServerID(s.cfg.NodeID), Address: s.transport.LocalAddr(),
		}}}
		if err := s.raft.BootstrapCluster(conf).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return fmt.Errorf("bootstrap a one-server group: %w", err)
		}
		s.logger.Info("bootstrapped a one-server group")
	}

	if s.grpcLis, err = net.Listen("tcp", s.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("listen for gRPC on %s: %w (is the port in use? pick another with --grpc-addr)", s.cfg.GRPCAddr, err)
	}
	s.grpcAddr = s.cfg.GRPCAdvertise
	if s.grpcAddr == "" {
		s.grpcAddr = s.grpcLis.Addr().String()
	}
	s.grpc = grpc.NewServer(append(append(s.sec.serverOptions(), longfairv1.ServerOptions()...),
		// Tokens are checked first (auth_interceptor.go), then requests,
		// before they are routed: a call without a usable token, or a
		// malformed one, is refused where it arrives and never travels
		// to the leader. Outermost, the FSM's refusals get their gRPC
		// codes (errors.go).
		grpc.ChainUnaryInterceptor(statusUnary, s.authUnary, longfairv1.ValidateUnary, s.unaryInterceptor),
		grpc.ChainStreamInterceptor(statusStream, s.authStream, s.streamInterceptor),
		// Clients and forwarding servers ping every 10 s to find a
		// server that stopped answering (client/options.go); gRPC's
		// default policy would refuse pings more often than every 5 min.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	)...)
	s.registerServices(s.grpc)
	reflection.Register(s.grpc)
	if err := s.startHTTP(); err != nil {
		return err
	}

	self := MemberMeta{
		Version:  memberMetaVersion,
		Role:     RoleServer,
		ID:       s.cfg.NodeID,
		Raft:     string(s.transport.LocalAddr()),
		GRPC:     s.grpcAddr,
		Expect:   s.cfg.BootstrapExpect,
		HasState: s.hadState || s.cfg.Bootstrap,
	}
	if s.gossip, err = startGossip(s.cfg, self, s.logger); err != nil {
		return err
	}

	s.goRun(func() {
		if err := s.grpc.Serve(s.grpcLis); err != nil {
			s.logger.Error("gRPC server stopped", "error", err)
		}
	})
	s.goRun(func() { s.leadershipLoop(runCtx, notify) })
	s.goRun(func() { s.watchLeaderLoop(runCtx) })
	known, err := loadKnownServers(s.cfg.DataDir)
	if err != nil {
		s.logger.Warn("ignoring the servers remembered in the data dir", "error", err)
	}
	if join := joinList(s.cfg.Join, known); len(join) > 0 {
		s.goRun(func() { s.gossip.joinLoop(runCtx, join) })
	}
	// The Raft log store's page and transaction statistics, through
	// go-metrics (ops/metrics.RouteLibraryMetrics shows them).
	s.goRun(func() { s.stores.runMetrics(runCtx, libraryMetricsInterval) })
	s.goRun(func() { s.rememberServersLoop(runCtx) })
	s.goRun(func() { s.rejoinLoop(runCtx) })
	s.goRun(func() { s.healthLoop(runCtx) })
	s.goRun(func() { s.stateCheckLoop(runCtx) })
	if s.cfg.BootstrapExpect > 0 && !s.hadState {
		s.goRun(func() { s.bootstrapLoop(runCtx) })
	}
	s.logger.Info("server started",
		"raft", s.RaftAddr(), "grpc", s.GRPCAddr(), "gossip", s.GossipAddr(),
		"data_dir", s.cfg.DataDir, "had_state", s.hadState, "http", s.HTTPAddr())
	return nil
}

// joinList is the configured join addresses followed by the remembered
// ones, without repeats.
func joinList(configured, remembered []string) []string {
	out := slices.Clone(configured)
	for _, a := range remembered {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Shutdown stops serving and closes the data dir. In-flight gRPC calls get
// until ctx ends to finish. It does not remove the server from the Raft
// configuration: a server that stops is expected back. Calling it again
// returns the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.shutdown(ctx) })
	return s.stopErr
}

func (s *Server) shutdown(ctx context.Context) error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
	}
	s.stopHTTP(ctx)
	if s.grpc != nil {
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpc.Stop()
			<-done
		}
	} else if s.grpcLis != nil {
		s.grpcLis.Close()
	}
	if s.gossip != nil {
		if err := s.gossip.leave(time.Second); err != nil {
			s.logger.Warn("leaving gossip pool", "error", err)
		}
	}
	if s.raft != nil {
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("stop raft: %w", err))
		}
	}
	if s.transport != nil {
		if err := s.transport.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close raft transport: %w", err))
		}
	}
	s.wg.Wait()
	s.fwd.close()
	if err := s.stores.close(); err != nil {
		errs = append(errs, fmt.Errorf("close raft log: %w", err))
	}
	if err := s.fsm.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close state: %w", err))
	}
	s.logger.Info("server stopped")
	return errors.Join(errs...)
}

// NodeID is this server's node id.
func (s *Server) NodeID() string { return s.cfg.NodeID }

// RaftAddr is the Raft address peers dial.
func (s *Server) RaftAddr() string { return string(s.transport.LocalAddr()) }

// GRPCAddr is the gRPC address clients and peers dial.
func (s *Server) GRPCAddr() string { return s.grpcAddr }

// GossipAddr is the gossip address other servers and workers join.
func (s *Server) GossipAddr() string { return s.gossip.Addr() }

// FSM is the server's replica of the cluster state.
func (s *Server) FSM() *fsm.FSM { return s.fsm }

// IsLeader reports whether this server is the Raft leader.
func (s *Server) IsLeader() bool { return s.raft.State() == raft.Leader }

// Leading reports whether this server leads and has caught up with the
// log its term began with: it schedules, and answers consistent reads,
// only then (integrity.go, forward.go and /readyz ask the same).
func (s *Server) Leading() bool { return s.IsLeader() && s.leaderReady.Load() }

// SeesServer reports whether the server with node id is in this server's
// gossip pool, which it needs to forward calls to it when it leads.
func (s *Server) SeesServer(id string) bool {
	_, ok := s.gossip.Server(id)
	return ok
}

// Leader returns the leader's node id, or "" while none is known.
func (s *Server) Leader() string {
	_, id := s.raft.LeaderWithID()
	return string(id)
}

// AppliedIndex is the index of the last log entry applied to the FSM.
func (s *Server) AppliedIndex() uint64 { return s.raft.AppliedIndex() }
