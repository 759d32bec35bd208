package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/longfair/longfair/server"
	"github.com/longfair/longfair/worker"
)

// inproc is a server group and workers running in this process, for the
// benchmarks: the same code as the binary, without process start-up in
// the measurements.
type inproc struct {
	tb      testing.TB
	dir     string
	servers []*server.Server
	conns   []*grpc.ClientConn
}

// benchLogger logs warnings and errors to stderr; LONGFAIR_BENCH_LOG=info
// shows more.
func benchLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("LONGFAIR_BENCH_LOG") == "info" {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func startInproc(ctx context.Context, tb testing.TB, n int) *inproc {
	tb.Helper()
	c := &inproc{tb: tb, dir: tb.TempDir()}
	tb.Cleanup(c.stop)
	for i := range n {
		cfg := server.DefaultConfig()
		cfg.NodeID = fmt.Sprintf("s%d", i+1)
		cfg.DataDir = filepath.Join(c.dir, cfg.NodeID)
		cfg.RaftAddr, cfg.GRPCAddr, cfg.GossipAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		cfg.BootstrapExpect = n
		if i > 0 {
			cfg.Join = []string{c.servers[0].GossipAddr()}
		}
		s, err := server.New(cfg, benchLogger().With("server", cfg.NodeID))
		must(tb, err, "new server")
		must(tb, s.Start(ctx), "start server")
		c.servers = append(c.servers, s)
		conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		must(tb, err, "dial")
		c.conns = append(c.conns, conn)
	}
	c.leader(ctx)
	return c
}

func (c *inproc) stop() {
	for _, conn := range c.conns {
		conn.Close()
	}
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Shutdown(ctx)
		}()
	}
	wg.Wait()
}

// leader waits for a leader and returns its index.
func (c *inproc) leader(ctx context.Context) int {
	c.tb.Helper()
	for {
		for i, s := range c.servers {
			if s.IsLeader() {
				return i
			}
		}
		select {
		case <-ctx.Done():
			c.tb.Fatal("no leader")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *inproc) joinAddrs() []string {
	var out []string
	for _, s := range c.servers {
		out = append(out, s.GossipAddr())
	}
	return out
}

// worker starts an in-process worker agent.
func (c *inproc) worker(ctx context.Context, id string, resources map[string]float64, obs worker.Observer) *worker.Agent {
	c.tb.Helper()
	cfg := worker.DefaultConfig()
	cfg.NodeID, cfg.Join = id, c.joinAddrs()
	cfg.GossipAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.WorkDir = filepath.Join(benchWorkDir(c.tb), id)
	cfg.Resources = resources
	cfg.Observer = obs
	ag, err := worker.New(cfg, benchLogger().With("worker", id))
	must(c.tb, err, "new worker")
	must(c.tb, ag.Start(ctx), "start worker")
	c.tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ag.Shutdown(sctx)
	})
	return ag
}

// waitUp waits until the leader's ledger has n nodes up.
func (c *inproc) waitUp(ctx context.Context, n int) {
	c.tb.Helper()
	for {
		up := 0
		for _, nd := range c.servers[c.leader(ctx)].FSM().Nodes() {
			if nd.Up {
				up++
			}
		}
		if up >= n {
			return
		}
		select {
		case <-ctx.Done():
			c.tb.Fatalf("%d of %d nodes up", up, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// starts records when attempts start, as a worker.Observer.
type starts struct {
	mu    sync.Mutex
	at    map[string]time.Time // "job.task" → first start
	count int
	sig   chan struct{}
}

func newStarts() *starts { return &starts{at: map[string]time.Time{}, sig: make(chan struct{}, 1)} }

func (s *starts) TaskStarted(job uint64, task int64, attempt int32, at time.Time) {
	s.mu.Lock()
	key := fmt.Sprintf("%d.%d", job, task)
	if _, ok := s.at[key]; !ok {
		s.at[key] = at
		s.count++
	}
	s.mu.Unlock()
	select {
	case s.sig <- struct{}{}:
	default:
	}
}

func (s *starts) TaskEnded(uint64, int64, int32, int32, time.Duration) {}

// wait waits until n distinct tasks have started and returns when the
// last of them did.
func (s *starts) wait(ctx context.Context, tb testing.TB, n int) time.Time {
	tb.Helper()
	for {
		s.mu.Lock()
		count := s.count
		var last time.Time
		if count >= n {
			for _, t := range s.at {
				if t.After(last) {
					last = t
				}
			}
		}
		s.mu.Unlock()
		if count >= n {
			return last
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("%d of %d tasks started", count, n)
		case <-s.sig:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *starts) get(key string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[key]
	return t, ok
}

// benchWorkDir is where in-process workers keep task directories and
// output: LONGFAIR_BENCH_WORK_DIR if set (for example a directory on the
// local disk, to include its cost), else a fresh directory in /dev/shm
// when there is one — compute nodes keep task scratch on fast local
// storage, and a loaded shared disk would otherwise be what is measured —
// else the test's temp dir.
func benchWorkDir(tb testing.TB) string {
	base := os.Getenv("LONGFAIR_BENCH_WORK_DIR")
	if base == "" {
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			base = "/dev/shm"
		} else {
			return tb.TempDir()
		}
	}
	dir, err := os.MkdirTemp(base, "longfair-bench-")
	must(tb, err, "work dir")
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
