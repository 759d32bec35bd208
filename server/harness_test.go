package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// testLogWriter sends server logs to the test log until the test ends;
// servers' background goroutines may still log during shutdown, after
// which testing.T must not be used.
type testLogWriter struct {
	tb   testing.TB
	done atomic.Bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.tb.Log(string(p))
	}
	return len(p), nil
}

// testLogger logs warnings and errors into the test log; set
// LONGFAIR_TEST_LOG=debug (or info) to see everything on stderr.
func testLogger(tb testing.TB) *slog.Logger {
	switch os.Getenv("LONGFAIR_TEST_LOG") {
	case "debug":
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	case "info":
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	w := &testLogWriter{tb: tb}
	tb.Cleanup(func() { w.done.Store(true) })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testCluster is a server group of real servers on loopback in this
// process, each with its own data dir.
type testCluster struct {
	tb      testing.TB
	logger  *slog.Logger
	mu      sync.Mutex
	cfgs    []Config
	servers []*Server // nil while stopped
	conns   map[string]*grpc.ClientConn
}

func testConfig(dir, id string) Config {
	cfg := DefaultConfig()
	cfg.NodeID = id
	cfg.DataDir = filepath.Join(dir, id)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.GRPCAddr = "127.0.0.1:0"
	cfg.GossipAddr = "127.0.0.1:0"
	// Token checks have their own tests (auth_test.go); the rest of the
	// suite calls without tokens.
	cfg.ACL.Enabled = false
	// Tests wait seconds, not a minute, for a lost worker's tasks to be
	// rerun; testWorker fences them sooner.
	cfg.WorkerLossTimeout = Duration(4 * time.Second)
	return cfg
}

// newTestCluster starts n servers with bootstrap-expect n, each joining the
// first one's gossip address, and waits for a leader.
func newTestCluster(tb testing.TB, n int) *testCluster {
	tb.Helper()
	return newTestClusterWith(tb, n, nil)
}

// newTestClusterWith is newTestCluster with each server's configuration
// changed by tune first.
func newTestClusterWith(tb testing.TB, n int, tune func(*Config)) *testCluster {
	tb.Helper()
	c := newEmptyCluster(tb)
	dir := tb.TempDir()
	for i := range n {
		cfg := testConfig(dir, fmt.Sprintf("s%d", i+1))
		cfg.BootstrapExpect = n
		if i > 0 {
			cfg.Join = []string{c.servers[0].GossipAddr()}
		}
		if tune != nil {
			tune(&cfg)
		}
		c.add(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c.waitLeader(ctx)
	return c
}

// newEmptyCluster returns a cluster without servers; add them with add.
func newEmptyCluster(tb testing.TB) *testCluster {
	c := &testCluster{tb: tb, logger: testLogger(tb), conns: make(map[string]*grpc.ClientConn)}
	tb.Cleanup(c.close)
	return c
}

// add starts a server with cfg and returns its index.
func (c *testCluster) add(cfg Config) int {
	c.cfgs = append(c.cfgs, cfg)
	c.servers = append(c.servers, nil)
	c.start(len(c.cfgs) - 1)
	return len(c.cfgs) - 1
}

// start starts server i from its configuration and data dir.
func (c *testCluster) start(i int) *Server {
	c.tb.Helper()
	s, err := New(c.cfgs[i], c.logger)
	if err != nil {
		c.tb.Fatalf("new server %s: %v", c.cfgs[i].NodeID, err)
	}
	if err := s.Start(context.Background()); err != nil {
		c.tb.Fatalf("start server %s: %v", c.cfgs[i].NodeID, err)
	}
	// A restart comes back on the same addresses, as a real server with
	// configured ports does.
	c.cfgs[i].RaftAddr = s.RaftAddr()
	c.cfgs[i].GRPCAddr = s.GRPCAddr()
	c.cfgs[i].GossipAddr = s.GossipAddr()
	c.mu.Lock()
	c.servers[i] = s
	c.mu.Unlock()
	return s
}

// stop shuts server i down; its data dir stays.
func (c *testCluster) stop(i int) {
	c.tb.Helper()
	c.mu.Lock()
	s := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		c.tb.Errorf("shutdown %s: %v", s.NodeID(), err)
	}
}

func (c *testCluster) close() {
	for _, conn := range c.conns {
		conn.Close()
	}
	for i := range c.servers {
		c.stop(i)
	}
}

func (c *testCluster) running() []*Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Server
	for _, s := range c.servers {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (c *testCluster) index(s *Server) int {
	for i, x := range c.servers {
		if x == s {
			return i
		}
	}
	c.tb.Fatalf("server %s is not running in the cluster", s.NodeID())
	return -1
}

// waitLeader waits until one running server leads, is current, and every
// running server agrees on who leads.
func (c *testCluster) waitLeader(ctx context.Context) *Server {
	c.tb.Helper()
	for {
		var leader *Server
		agree := true
		for _, s := range c.running() {
			if s.IsLeader() && s.leaderReady.Load() {
				leader = s
			}
		}
		if leader != nil {
			for _, s := range c.running() {
				if s.Leader() != leader.NodeID() {
					agree = false
				}
			}
			if agree {
				return leader
			}
		}
		select {
		case <-ctx.Done():
			c.tb.Fatalf("no leader within the deadline: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitLeaderAmong waits until s leads and is current.
func (c *testCluster) waitLeaderAmong(ctx context.Context, s *Server) *Server {
	c.tb.Helper()
	for !s.IsLeader() || !s.leaderReady.Load() {
		select {
		case <-ctx.Done():
			c.tb.Fatalf("%s did not become leader: %v", s.NodeID(), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// follower returns some running server that is not the leader.
func (c *testCluster) follower(ctx context.Context) *Server {
	leader := c.waitLeader(ctx)
	for _, s := range c.running() {
		if s != leader {
			return s
		}
	}
	c.tb.Fatal("no follower running")
	return nil
}

// conn returns a client connection to server s.
func (c *testCluster) conn(s *Server) *grpc.ClientConn {
	c.tb.Helper()
	addr := s.GRPCAddr()
	if conn, ok := c.conns[addr]; ok {
		return conn
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		c.tb.Fatalf("dial %s: %v", addr, err)
	}
	c.conns[addr] = conn
	return conn
}

// waitConverged waits until every running server has applied the same
// index and holds byte-identical state, and returns that state's digest.
func (c *testCluster) waitConverged(ctx context.Context) [32]byte {
	c.tb.Helper()
	return c.waitConvergedHow(ctx, true)
}

// waitConvergedRaftOnly is waitConverged for servers that do not share a
// gossip pool.
func (c *testCluster) waitConvergedRaftOnly(ctx context.Context) [32]byte {
	c.tb.Helper()
	return c.waitConvergedHow(ctx, false)
}

func (c *testCluster) waitConvergedHow(ctx context.Context, gossip bool) [32]byte {
	c.tb.Helper()
	for {
		digest, why := c.converged(gossip)
		if why == "" {
			return digest
		}
		select {
		case <-ctx.Done():
			c.tb.Fatalf("servers did not converge: %s", why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *testCluster) converged(gossip bool) ([32]byte, string) {
	servers := c.running()
	var (
		digest [32]byte
		index  uint64
	)
	for i, s := range servers {
		idx := s.raft.AppliedIndex()
		d, err := s.FSM().Digest()
		if err != nil {
			return [32]byte{}, fmt.Sprintf("digest of %s: %v", s.NodeID(), err)
		}
		if i == 0 {
			digest, index = d, idx
			continue
		}
		if idx != index {
			return [32]byte{}, fmt.Sprintf("%s applied index %d, %s %d", servers[0].NodeID(), index, s.NodeID(), idx)
		}
		if d != digest {
			return [32]byte{}, fmt.Sprintf("%s and %s hold different state at index %d", servers[0].NodeID(), s.NodeID(), idx)
		}
	}
	// Every server must also know every other through gossip, or it
	// cannot forward to whichever of them leads.
	if gossip {
		for _, s := range servers {
			for _, o := range servers {
				if _, ok := s.gossip.Server(o.NodeID()); !ok {
					return [32]byte{}, fmt.Sprintf("%s does not see %s in the gossip pool", s.NodeID(), o.NodeID())
				}
			}
		}
	}
	return digest, ""
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

// retryUnavailable calls f until it returns anything but Unavailable,
// which is what servers answer while leadership moves (a busy test machine
// can delay heartbeats enough to cause an election). It returns f's last
// error. Callers retry only idempotent requests: named creations, grants
// with ids and submissions with request ids.
func retryUnavailable(ctx context.Context, tb testing.TB, f func() error) error {
	tb.Helper()
	for {
		err := f()
		if status.Code(err) != codes.Unavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(25 * time.Millisecond):
		}
	}
}
