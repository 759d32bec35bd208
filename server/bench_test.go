package server_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// submitLoad is one throughput run: clients goroutines, each with its own
// connection, submit jobs of tasks tasks until total are acknowledged.
type submitLoad struct {
	clients int
	tasks   int64
	total   int
}

type loadResult struct {
	elapsed   time.Duration
	latencies []time.Duration
	// cpu is the process's CPU time during the run: all three servers and
	// every client, since they share this process.
	cpu time.Duration
}

// processCPU is the CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (l submitLoad) run(ctx context.Context, b *testing.B, c *testcluster.Cluster, targets []*server.Server, account, user string) loadResult {
	b.Helper()
	conns := make([]*grpc.ClientConn, l.clients)
	for i := range conns {
		// One connection per client, as separate client processes have.
		conn, err := grpc.NewClient(targets[i%len(targets)].GRPCAddr(), grpc.WithTransportCredentials(testcluster.InsecureCreds()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		conns[i] = conn
	}
	// Clients are measured in their steady state: each is connected before
	// the clock starts, so no submission's latency includes a TCP and
	// HTTP/2 handshake.
	for _, conn := range conns {
		waitReady(ctx, b, conn)
	}
	var (
		next     atomic.Int64
		failures atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
		perCl    = make([][]time.Duration, l.clients)
	)
	cpu0 := processCPU()
	start := time.Now()
	for i := range l.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs := longfairv1.NewJobsClient(conns[i])
			for {
				n := next.Add(1)
				if n > int64(l.total) {
					return
				}
				req := submitRequest(account, user, "", l.tasks)
				t0 := time.Now()
				_, err := jobs.SubmitJob(ctx, req)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				perCl[i] = append(perCl[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	res := loadResult{elapsed: time.Since(start), cpu: processCPU() - cpu0}
	if failures.Load() > 0 {
		b.Fatalf("%d submissions failed; first: %v", failures.Load(), firstErr.Load())
	}
	for _, p := range perCl {
		res.latencies = append(res.latencies, p...)
	}
	slices.Sort(res.latencies)
	return res
}

// waitReady connects conn and waits until it is ready.
func waitReady(ctx context.Context, b *testing.B, conn *grpc.ClientConn) {
	b.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn.Connect()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		if !conn.WaitForStateChange(ctx, st) {
			b.Fatalf("connection to %s not ready: %s", conn.Target(), st)
		}
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkSubmitOneTaskJobs64Clients: committed one-task submissions per
// second on a 3-server group over loopback, from 64 concurrent clients,
// and their latency. Goal: ≥ 5,000/s with p99 ≤ 20 ms. "leader" connects
// every client to the leader; "any" spreads them over all three servers,
// so two thirds of the submissions are forwarded.
func BenchmarkSubmitOneTaskJobs64Clients(b *testing.B) {
	for _, via := range []string{"leader", "any"} {
		b.Run("via="+via, func(b *testing.B) {
			ctx := context.Background()
			c := testcluster.New(b, 3)
			account, user := setupAccount(ctx, b, c, "bench")
			targets := []*server.Server{c.WaitLeader(ctx)}
			if via == "any" {
				targets = c.Running()
			}
			load := submitLoad{clients: 64, tasks: 1, total: 4096 * b.N}
			b.ResetTimer()
			res := load.run(ctx, b, c, targets, account, user)
			b.StopTimer()
			b.ReportMetric(float64(load.total)/res.elapsed.Seconds(), "submits/s")
			b.ReportMetric(ms(percentile(res.latencies, 0.50)), "p50_ms")
			b.ReportMetric(ms(percentile(res.latencies, 0.99)), "p99_ms")
			b.ReportMetric(float64(res.cpu.Microseconds())/float64(load.total), "cpu_us/submit")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSubmitThousandTaskArrays: tasks per second committed as
// 1,000-task job arrays on a 3-server group, from 16 clients to the
// leader. Goal: ≥ 100,000 tasks/s.
func BenchmarkSubmitThousandTaskArrays(b *testing.B) {
	ctx := context.Background()
	c := testcluster.New(b, 3)
	account, user := setupAccount(ctx, b, c, "bench")
	load := submitLoad{clients: 16, tasks: 1000, total: 256 * b.N}
	b.ResetTimer()
	res := load.run(ctx, b, c, []*server.Server{c.WaitLeader(ctx)}, account, user)
	b.StopTimer()
	b.ReportMetric(float64(int64(load.total)*load.tasks)/res.elapsed.Seconds(), "tasks/s")
	b.ReportMetric(float64(load.total)/res.elapsed.Seconds(), "arrays/s")
	b.ReportMetric(ms(percentile(res.latencies, 0.99)), "p99_ms")
	b.ReportMetric(float64(res.cpu.Microseconds())/float64(int64(load.total)*load.tasks), "cpu_us/task")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLeaderFailover: time from stopping the leader of a 3-server
// group to the next write committed through a surviving server. Each
// iteration stops the current leader, measures, and brings it back.
// Goal: < 3 s.
func BenchmarkLeaderFailover(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := testcluster.New(b, 3)
	account, user := setupAccount(ctx, b, c, "bench")
	w := &ackedWrites{account: account, user: user, jobs: map[uint64]string{}}
	var total, worst time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		leader := c.WaitLeader(ctx)
		idx := c.Index(leader)
		survivor := c.Running()[(idx+1)%3]
		b.StartTimer()
		t0 := time.Now()
		c.Stop(idx)
		submitUntilAccepted(ctx, b, c, survivor, w, fmt.Sprintf("failover-%d", i))
		d := time.Since(t0)
		b.StopTimer()
		total += d
		worst = max(worst, d)
		c.Start(idx)
		c.WaitConverged(ctx)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(total.Seconds()/float64(b.N), "failover_s")
	b.ReportMetric(worst.Seconds(), "worst_failover_s")
	b.ReportMetric(0, "ns/op")
}

// fsyncLatency is the mean time of one 4 KiB write and fsync of a file
// in dir, over n.
func fsyncLatency(b *testing.B, dir string, n int) time.Duration {
	b.Helper()
	f, err := os.CreateTemp(dir, "fsync")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	start := time.Now()
	for range n {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// BenchmarkCommitLatencyAtLightLoad: the mean time of one submission
// committed by a 3-server group over loopback, from one client sending
// one at a time (light load: nothing to batch), beside one fsync on the
// same file system measured in the same run, in turns, for each Raft log
// store. Goal: ≤ 3 fsyncs. A commit needs the leader's log append, then a
// follower's (hashicorp/raft writes the leader's before it sends), the
// round trip between them, and the leader's state machine commit, which
// syncs nothing (fsm.Options.RebuiltFromLog). An append is a bbolt commit
// of two disk syncs with boltdb, one sync with wal. Here the three servers
// share one disk and two cores. It also reports hashicorp/raft's and the
// log store's own means (the *_ms of the library, below), which show the
// split.
func BenchmarkCommitLatencyAtLightLoad(b *testing.B) {
	for _, store := range server.LogStores() {
		b.Run(store, func(b *testing.B) { commitLatencyAtLightLoad(b, store) })
	}
}

func commitLatencyAtLightLoad(b *testing.B, store string) {
	ctx := context.Background()
	c := testcluster.NewWith(b, 3, func(cfg *server.Config) { cfg.Raft.LogStore = store })
	account, user := setupAccount(ctx, b, c, "bench")
	leader := []*server.Server{c.WaitLeader(ctx)}
	// hashicorp/raft's and the log store's own timers (go-metrics, one sink
	// per process, so the three servers' together) say where the
	// commit's time goes; from here on, so that set-up is not counted.
	lib := gometrics.NewInmemSink(time.Hour, time.Hour)
	libCfg := gometrics.DefaultConfig("bench")
	libCfg.EnableRuntimeMetrics, libCfg.EnableHostname = false, false
	if _, err := gometrics.NewGlobal(libCfg, lib); err != nil {
		b.Fatal(err)
	}
	defer gometrics.NewGlobal(libCfg, &gometrics.BlackholeSink{})
	dir := b.TempDir()
	var commit, fsync time.Duration
	n := 0
	b.ResetTimer()
	for range b.N {
		for range 5 {
			fsync += fsyncLatency(b, dir, 20) * 20
			res := submitLoad{clients: 1, tasks: 1, total: 20}.run(ctx, b, c, leader, account, user)
			for _, l := range res.latencies {
				commit += l
			}
			n += 20
		}
	}
	b.StopTimer()
	meanCommit, meanFsync := commit/time.Duration(n), fsync/time.Duration(n)
	b.ReportMetric(ms(meanCommit), "commit_ms")
	b.ReportMetric(ms(meanFsync), "fsync_ms")
	b.ReportMetric(float64(meanCommit)/float64(meanFsync), "commit/fsync")
	// The library's means over the run (milliseconds, its unit): one log
	// append with its syncs on any server, the leader's, and the
	// leader's round trip to a follower, that follower's append included
	// (log_append_ms is raft-boltdb's alone; raft-wal times no appends);
	// a commit is the leader's append, then a follower's round trip. An
	// FSM apply is any server's.
	for name, key := range map[string]string{
		"log_append_ms":      "bench.raft.boltdb.storeLogs",
		"leader_append_ms":   "bench.raft.leader.dispatchLog",
		"follower_rtt_ms":    "bench.raft.replication.appendEntries.rpc",
		"raft_commit_ms":     "bench.raft.commitTime",
		"fsm_apply_ms":       "bench.raft.fsm.applyBatch",
		"follower_append_ms": "bench.raft.rpc.appendEntries.storeLogs",
	} {
		var sum float64
		var n int
		for _, iv := range lib.Data() {
			for k, v := range iv.Samples {
				// A labelled timer's key carries its labels after ';'.
				if k == key || strings.HasPrefix(k, key+";") {
					sum += v.Sum
					n += v.Count
				}
			}
		}
		if n > 0 {
			b.ReportMetric(sum/float64(n), name)
		}
	}
	b.ReportMetric(0, "ns/op")
}
