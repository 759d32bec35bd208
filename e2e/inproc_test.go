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

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"github.com/longfair/longfair/worker"
)

// inproc is the test cluster (internal/testcluster) in this process, for
// the benchmarks: the same code as the binary, without process start-up in
// the measurements, and with production timings (a lost worker's tasks are
// rerun after the default worker_loss_timeout, workers fence after the
// default fence time-out), so that what is measured is what a center runs.
type inproc struct {
	*testcluster.Cluster
	tb testing.TB
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
	c := testcluster.NewWith(tb, n, func(cfg *server.Config) {
		cfg.WorkerLossTimeout = server.DefaultConfig().WorkerLossTimeout
	})
	c.WaitLeader(ctx)
	return &inproc{Cluster: c, tb: tb}
}

// leaderConn is a connection to the current leader.
func (c *inproc) leaderConn(ctx context.Context) *grpc.ClientConn {
	return c.Conn(c.WaitLeader(ctx))
}

// worker starts an in-process worker agent with production timings.
func (c *inproc) worker(ctx context.Context, id string, resources map[string]float64, obs worker.Observer) *worker.Agent {
	c.tb.Helper()
	defaults := worker.DefaultConfig()
	return testcluster.WorkerLogging(c.tb, c.Cluster, id, func(cfg *worker.Config) {
		cfg.WorkDir = filepath.Join(benchWorkDir(c.tb), id)
		cfg.Resources = resources
		cfg.Observer = obs
		cfg.KillGrace, cfg.FenceTimeout = defaults.KillGrace, defaults.FenceTimeout
	}, benchLogger().With("worker", id))
}

// waitUp waits until the leader's ledger has n nodes up.
func (c *inproc) waitUp(ctx context.Context, n int) {
	c.tb.Helper()
	testcluster.WaitFor(ctx, c.tb, fmt.Sprintf("%d nodes up", n), func() bool {
		up := 0
		for _, nd := range c.WaitLeader(ctx).FSM().Nodes() {
			if nd.Up {
				up++
			}
		}
		return up >= n
	})
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
