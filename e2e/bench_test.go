package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
)

// benchAccount creates an account, its user and a large grant.
func benchAccount(ctx context.Context, b testing.TB, c *inproc, name string) (string, string) {
	conn := c.leaderConn(ctx)
	_, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name})
	must(b, err, "create account")
	_, err = longfairv1.NewUsersClient(conn).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: name + "-user", Accounts: []string{name}})
	must(b, err, "create user")
	_, err = longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: name + "-grant", Account: name, AmountMicroSu: 1e17})
	must(b, err, "grant")
	return name, name + "-user"
}

func benchSubmit(ctx context.Context, b testing.TB, c *inproc, account, user, rid string, tasks int64, script string) uint64 {
	resp, err := longfairv1.NewJobsClient(c.leaderConn(ctx)).SubmitJob(ctx, &longfairv1.SubmitJobRequest{
		Account: account, User: user, Name: rid, RequestId: rid, Tasks: tasks,
		Demand: map[string]float64{"cpu": 1}, Walltime: durationpb.New(time.Hour), Command: []string{script},
	})
	must(b, err, "submit %s", rid)
	return resp.GetJob().GetId()
}

// Task starts per second through the whole path: submit → commit →
// scheduling pass → assign committed → pushed to the worker → process
// started, with three servers and ten workers in this process. Each task
// is /bin/sh -c true; the array is larger than the cluster's 640 slots,
// so slots are reused as tasks end (their exits go through the ledger too).
func BenchmarkTaskStartsThroughTheWholePath(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startInproc(ctx, b, 3)
	account, user := benchAccount(ctx, b, c, "bench")
	obs := newStarts()
	for i := range 10 {
		c.worker(ctx, fmt.Sprintf("w%d", i), map[string]float64{"cpu": 64, "mem": 256 << 30}, obs)
	}
	c.waitUp(ctx, 10)
	const tasks = 4000
	b.ResetTimer()
	var total time.Duration
	for i := range b.N {
		start := time.Now()
		benchSubmit(ctx, b, c, account, user, fmt.Sprintf("array-%d", i), tasks, "true")
		last := obs.wait(ctx, b, (i+1)*tasks)
		total += last.Sub(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*tasks)/total.Seconds(), "starts/s")
	// What the machine can do at all right now: the same number of
	// /bin/sh -c true started directly, 640 at a time, with nothing else.
	// On shared cores this moves with the load; starts/s is read against it.
	b.ReportMetric(bareExecRate(b, tasks, 640), "bare-exec/s")
}

// bareExecRate starts n /bin/sh -c true processes, at most par at once,
// the way the worker starts tasks, and returns how many it started per
// second.
func bareExecRate(b *testing.B, n, par int) float64 {
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cmd := exec.Command("/bin/sh", "-c", "true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Run(); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// Submit-to-start latency on an idle cluster: from the SubmitJob call to
// the task's process running, one single-task job at a time, three
// servers and one worker in this process.
func BenchmarkSubmitToStartLatency(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startInproc(ctx, b, 3)
	account, user := benchAccount(ctx, b, c, "bench")
	obs := newStarts()
	c.worker(ctx, "w1", map[string]float64{"cpu": 4, "mem": 8 << 30}, obs)
	c.waitUp(ctx, 1)
	n := max(b.N, 100)
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := range n {
		start := time.Now()
		id := benchSubmit(ctx, b, c, account, user, fmt.Sprintf("one-%d", i), 1, "true")
		obs.wait(ctx, b, i+1)
		at, _ := obs.get(fmt.Sprintf("%d.0", id))
		lat = append(lat, at.Sub(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// Raft entries per one-task job: jobs of /bin/sh -c true submitted one
// at a time to an idle cluster (three servers and one worker in this
// process), each waited for to its end, counting the entries the leader
// applied. A job asks at most four (its submission, its Assign, its
// task's start and its end); a worker holds a short task's start back to
// send it with its end (worker: startHold), so they share one.
func BenchmarkRaftEntriesPerJob(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startInproc(ctx, b, 3)
	account, user := benchAccount(ctx, b, c, "bench")
	c.worker(ctx, "w1", map[string]float64{"cpu": 4, "mem": 8 << 30}, nil)
	c.waitUp(ctx, 1)
	n := max(b.N, 50)
	leader := c.WaitLeader(ctx)
	first, _ := leader.FSM().AppliedIndex()
	b.ResetTimer()
	for i := range n {
		id := benchSubmit(ctx, b, c, account, user, fmt.Sprintf("one-%d", i), 1, "true")
		testcluster.WaitFor(ctx, b, fmt.Sprintf("job %d ended", id), func() bool {
			j, err := leader.FSM().Job(id)
			return err == nil && j.State.Ended()
		})
	}
	b.StopTimer()
	last, _ := leader.FSM().AppliedIndex()
	b.ReportMetric(float64(last-first)/float64(n), "entries/job")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Time to detect a dead worker and requeue its tasks: a worker process
// (the built binary) runs two tasks and is killed with kill -9; the clock
// stops when the ledger has marked both attempts lost and requeued them.
// Three servers in this process.
func BenchmarkDeadWorkerDetectAndRequeue(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startInproc(ctx, b, 3)
	account, user := benchAccount(ctx, b, c, "bench")
	dir := b.TempDir()
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		id := fmt.Sprintf("victim%d", i)
		join := ""
		for _, a := range c.GossipAddrs() {
			join += a + ","
		}
		victim := testcluster.StartProc(b, binary, dir, id, "worker", "--node-id", id, "--join", join[:len(join)-1],
			"--gossip-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--work-dir", dir+"/"+id,
			"--cpu", "2", "--mem", "4G", "--log-format", "json", "--as-self", "--unconfined")
		c.waitUp(ctx, 1)
		job := benchSubmit(ctx, b, c, account, user, fmt.Sprintf("victim-job-%d", i), 2, "sleep 600")
		f := c.WaitLeader(ctx).FSM()
		testcluster.WaitFor(ctx, b, "both tasks running", func() bool {
			run := f.Running(id)
			return len(run) == 2 && run[0].State == fsm.TaskRunning && run[1].State == fsm.TaskRunning
		})
		b.StartTimer()
		start := time.Now()
		victim.KillProcess()
		testcluster.WaitFor(ctx, b, "both attempts lost and requeued", func() bool {
			j, err := c.WaitLeader(ctx).FSM().Job(job)
			return err == nil && j.Pending == 2 && j.Running == 0
		})
		total += time.Since(start)
		b.StopTimer()
		// The node is down; cancel the requeued tasks for the next round.
		_, err := longfairv1.NewJobsClient(c.leaderConn(ctx)).CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: job})
		must(b, err, "cancel")
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/detect+requeue")
}
