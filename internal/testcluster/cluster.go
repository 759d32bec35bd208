package testcluster

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

	"github.com/longfair/longfair/server"
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

// Logger logs warnings and errors into the test log; set
// LONGFAIR_TEST_LOG=debug (or info) to see everything on stderr.
func Logger(tb testing.TB) *slog.Logger {
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

// Cluster is a server group of real servers on loopback in this
// process, each with its own data dir.
type Cluster struct {
	tb      testing.TB
	logger  *slog.Logger
	mu      sync.Mutex
	cfgs    []server.Config
	servers []*server.Server // nil while stopped
	conns   map[string]*grpc.ClientConn
	dir     string // the servers' data dirs go under it
}

func Config(dir, id string) server.Config {
	cfg := server.DefaultConfig()
	cfg.NodeID = id
	cfg.DataDir = filepath.Join(dir, id)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.GRPCAddr = "127.0.0.1:0"
	cfg.GossipAddr = "127.0.0.1:0"
	// Token checks have their own tests (auth_test.go); the rest of the
	// suite calls without tokens.
	cfg.ACL.Enabled = false
	// Tests wait seconds, not a minute, for a lost worker's tasks to be
	// rerun; Worker fences them sooner.
	cfg.WorkerLossTimeout = server.Duration(4 * time.Second)
	return cfg
}

// New starts n servers with bootstrap-expect n, each joining the
// first one's gossip address, and waits for a leader.
func New(tb testing.TB, n int) *Cluster {
	tb.Helper()
	return NewWith(tb, n, nil)
}

// NewWith is New with each server's configuration
// changed by tune first.
func NewWith(tb testing.TB, n int, tune func(*server.Config)) *Cluster {
	tb.Helper()
	c := Empty(tb)
	dir := c.Dir()
	for i := range n {
		cfg := Config(dir, fmt.Sprintf("s%d", i+1))
		cfg.BootstrapExpect = n
		if i > 0 {
			cfg.Join = []string{c.servers[0].GossipAddr()}
		}
		if tune != nil {
			tune(&cfg)
		}
		c.Add(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c.WaitLeader(ctx)
	return c
}

// Empty returns a cluster without servers; add them with Add, their data
// dirs under Dir.
func Empty(tb testing.TB) *Cluster {
	// The directory first: cleanups run last-registered first, so the
	// servers stop (Close) before their data is removed.
	dir := tb.TempDir()
	c := &Cluster{tb: tb, logger: Logger(tb), conns: make(map[string]*grpc.ClientConn), dir: dir}
	tb.Cleanup(c.Close)
	return c
}

// Dir is a directory for the servers' data dirs, removed only after
// Close has stopped them.
func (c *Cluster) Dir() string { return c.dir }

// Add starts a server with cfg and returns its index.
func (c *Cluster) Add(cfg server.Config) int {
	c.cfgs = append(c.cfgs, cfg)
	c.servers = append(c.servers, nil)
	c.Start(len(c.cfgs) - 1)
	return len(c.cfgs) - 1
}

// Start starts server i from its configuration and data dir.
func (c *Cluster) Start(i int) *server.Server {
	c.tb.Helper()
	s, err := server.New(c.cfgs[i], c.logger)
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

// Reconfigure changes stopped server i's configuration for its next
// Start.
func (c *Cluster) Reconfigure(i int, change func(*server.Config)) {
	change(&c.cfgs[i])
}

// Stop shuts server i down; its data dir stays.
func (c *Cluster) Stop(i int) {
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

func (c *Cluster) Close() {
	for _, conn := range c.conns {
		conn.Close()
	}
	for i, s := range c.servers {
		// A server stopping without its data dir cannot write what a
		// clean shutdown leaves (the state's digest record), so the test
		// would not be stopping it as an operator does.
		if _, err := os.Stat(c.cfgs[i].DataDir); s != nil && err != nil {
			c.tb.Errorf("server %s's data dir is gone before the server stopped (remove it only after Close): %v", s.NodeID(), err)
		}
	}
	for i := range c.servers {
		c.Stop(i)
	}
}

func (c *Cluster) Running() []*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*server.Server
	for _, s := range c.servers {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (c *Cluster) Index(s *server.Server) int {
	for i, x := range c.servers {
		if x == s {
			return i
		}
	}
	c.tb.Fatalf("server %s is not running in the cluster", s.NodeID())
	return -1
}

// WaitLeader waits until one running server leads, is current, and every
// Running server agrees on who leads.
func (c *Cluster) WaitLeader(ctx context.Context) *server.Server {
	c.tb.Helper()
	for {
		var leader *server.Server
		agree := true
		for _, s := range c.Running() {
			if s.Leading() {
				leader = s
			}
		}
		if leader != nil {
			for _, s := range c.Running() {
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

// WaitLeaderAmong waits until s leads and is current.
func (c *Cluster) WaitLeaderAmong(ctx context.Context, s *server.Server) *server.Server {
	c.tb.Helper()
	for !s.Leading() {
		select {
		case <-ctx.Done():
			c.tb.Fatalf("%s did not become leader: %v", s.NodeID(), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// Follower returns some running server that is not the leader.
func (c *Cluster) Follower(ctx context.Context) *server.Server {
	leader := c.WaitLeader(ctx)
	for _, s := range c.Running() {
		if s != leader {
			return s
		}
	}
	c.tb.Fatal("no follower running")
	return nil
}

// Conn returns a client connection to server s.
func (c *Cluster) Conn(s *server.Server) *grpc.ClientConn {
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

// WaitConverged waits until every running server has applied the same
// Index and holds byte-identical state, and returns that state's digest.
func (c *Cluster) WaitConverged(ctx context.Context) [32]byte {
	c.tb.Helper()
	return c.waitConvergedHow(ctx, true)
}

// WaitConvergedRaftOnly is waitConverged for servers that do not share a
// gossip pool.
func (c *Cluster) WaitConvergedRaftOnly(ctx context.Context) [32]byte {
	c.tb.Helper()
	return c.waitConvergedHow(ctx, false)
}

func (c *Cluster) waitConvergedHow(ctx context.Context, gossip bool) [32]byte {
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

func (c *Cluster) converged(gossip bool) ([32]byte, string) {
	servers := c.Running()
	var (
		digest [32]byte
		index  uint64
	)
	for i, s := range servers {
		idx := s.AppliedIndex()
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
				if !s.SeesServer(o.NodeID()) {
					return [32]byte{}, fmt.Sprintf("%s does not see %s in the gossip pool", s.NodeID(), o.NodeID())
				}
			}
		}
	}
	return digest, ""
}

func InsecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

// RetryUnavailable calls f until it returns anything but Unavailable,
// which is what servers answer while leadership moves (a busy test machine
// can delay heartbeats enough to cause an election). It returns f's last
// error. Callers retry only idempotent requests: named creations, grants
// with ids and submissions with request ids.
func RetryUnavailable(ctx context.Context, tb testing.TB, f func() error) error {
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

// Len is the number of servers the cluster has had (running or stopped).
func (c *Cluster) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cfgs)
}

// Server is server i, or nil while it is stopped.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.servers[i]
}

// ServerConfig is server i's configuration, its addresses as it last
// listened on them.
func (c *Cluster) ServerConfig(i int) server.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfgs[i]
}

// TB is the test the cluster belongs to.
func (c *Cluster) TB() testing.TB { return c.tb }

// Log is the logger the cluster's servers log to.
func (c *Cluster) Log() *slog.Logger { return c.logger }

// UseConn makes Conn return conn for the server listening on addr (a
// connection with the test's own credentials, say).
func (c *Cluster) UseConn(addr string, conn *grpc.ClientConn) { c.conns[addr] = conn }

// Addrs are the gRPC addresses of the running servers, in index order:
// what a client is given.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, s := range c.Running() {
		out = append(out, s.GRPCAddr())
	}
	return out
}

// Leader is the running server that leads now, or nil; it does not wait
// (WaitLeader does).
func (c *Cluster) Leader() *server.Server {
	for _, s := range c.Running() {
		if s.IsLeader() {
			return s
		}
	}
	return nil
}

// GossipAddrs are the gossip addresses of the running servers: what a
// worker joins.
func (c *Cluster) GossipAddrs() []string {
	var out []string
	for _, s := range c.Running() {
		out = append(out, s.GossipAddr())
	}
	return out
}

// Retry is RetryUnavailable for a call that must succeed: the test fails,
// saying what was called, when it does not.
func Retry(ctx context.Context, tb testing.TB, what string, f func() error) {
	tb.Helper()
	if err := RetryUnavailable(ctx, tb, f); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}
