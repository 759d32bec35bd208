package server_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// TestSecondWorkerWithTheSameNodeIDIsRefused: a second worker agent
// started with a node id another live worker holds is refused by the
// leader and says so in its log, retrying slowly; the first keeps its
// stream and its running attempt completes on its first try, also when
// the second is stopped meanwhile. A worker restarted with that node id
// after the first stops connects.
func TestSecondWorkerWithTheSameNodeIDIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	first := testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	resp, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "long", 1, map[string]float64{"cpu": 1}, time.Minute, "sleep 5"))
	if err != nil {
		t.Fatal(err)
	}
	job := resp.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "the task to run on w1", func() bool {
		ts := testcluster.AllTasks(ctx, t, c, job)
		return len(ts) == 1 && ts[0].GetState() == longfairv1.TaskState_TASK_STATE_RUNNING
	})
	stream := leader.WorkerStream("w1")
	if stream == nil {
		t.Fatal("the leader holds no stream of w1")
	}

	logs := &testcluster.LogCapture{}
	started := time.Now()
	second := testcluster.WorkerLogging(t, c, "w1", nil, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	const refusal = "another worker already holds node w1"
	testcluster.WaitFor(ctx, t, "the second worker to be refused", func() bool { return strings.Contains(logs.String(), refusal) })
	for _, words := range []string{"level=ERROR", "from 127.0.0.1:", "--node-id"} {
		if !strings.Contains(logs.String(), words) {
			t.Errorf("the second worker's log does not say %q:\n%s", words, logs.String())
		}
	}
	if leader.WorkerStream("w1") != stream || !first.Connected() || second.Connected() {
		t.Fatalf("the second worker took the stream (same stream %v, first connected %v, second connected %v)",
			leader.WorkerStream("w1") == stream, first.Connected(), second.Connected())
	}
	// Stopped while refused, the second must not take the first's node
	// down on its way out.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	if err := second.Shutdown(sctx); err != nil {
		t.Errorf("shut the second worker down: %v", err)
	}
	scancel()
	tries := strings.Count(logs.String(), refusal)
	if limit := 1 + int(time.Since(started)/time.Second); tries > limit {
		t.Errorf("the refused worker asked %d times in %v: it must back off", tries, time.Since(started).Round(time.Millisecond))
	}

	if j := testcluster.WaitJobEnded(ctx, t, c, job); j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the first worker's job ended %v", j.GetState())
	}
	if ts := testcluster.AllTasks(ctx, t, c, job); len(ts) != 1 || ts[0].GetAttempt() != 1 || ts[0].GetNode() != "w1" {
		t.Fatalf("tasks %v: want one attempt, on w1, never lost", ts)
	}
	if leader.WorkerStream("w1") != stream {
		t.Fatal("the first worker's stream was replaced")
	}

	// The first stops; a worker restarted as w1 connects and runs tasks.
	sctx, scancel = context.WithTimeout(ctx, 10*time.Second)
	first.Shutdown(sctx)
	scancel()
	restarted := testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitFor(ctx, t, "the restarted worker to connect", restarted.Connected)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	resp, err = jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "again", 1, map[string]float64{"cpu": 1}, time.Minute, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if j := testcluster.WaitJobEnded(ctx, t, c, resp.GetJob().GetId()); j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the restarted worker's job ended %v", j.GetState())
	}
}

// rawStream is a worker stream opened by hand with a chosen session.
type rawStream struct {
	cancel context.CancelFunc
	ended  chan error
	mute   atomic.Bool // stop answering heartbeats, as a hung worker
}

// openRaw says hello as node with session and returns the stream once
// welcomed, or the refusal. The stream answers heartbeats until muted.
func openRaw(ctx context.Context, t *testing.T, c *testcluster.Cluster, node, session string) (*rawStream, error) {
	t.Helper()
	return openRawFencing(ctx, t, c, node, session, 0)
}

// openRawFencing is openRaw with a hello saying the process fences within
// fenced (none said when 0, as an older worker).
func openRawFencing(ctx context.Context, t *testing.T, c *testcluster.Cluster, node, session string, fenced time.Duration) (*rawStream, error) {
	t.Helper()
	hello := &longfairv1.WorkerHello{Advert: rawAdvert(node), Session: session, Fresh: true}
	if fenced > 0 {
		hello.FencedWithin = durationpb.New(fenced)
	}
	stream, _, cancel, err := sayHello(ctx, t, c, hello)
	if err != nil {
		return nil, err
	}
	r := &rawStream{cancel: cancel, ended: make(chan error, 1)}
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				r.ended <- err
				return
			}
			if m.GetHeartbeat() != nil && !r.mute.Load() {
				stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{}}})
			}
		}
	}()
	return r, nil
}

// rawAdvert is the advert of a hand-made worker of node: one cpu.
func rawAdvert(node string) *longfairv1.WorkerAdvert {
	return &longfairv1.WorkerAdvert{Version: 1, Role: server.RoleWorker, NodeId: node, Resources: map[string]float64{"cpu": 1}, Address: "127.0.0.1:1"}
}

// sayHello opens a stream to the leader, sends hello and waits for the
// welcome; it returns the leader's refusal instead when there is one. The
// stream ends with cancel, or when the test does.
func sayHello(ctx context.Context, t *testing.T, c *testcluster.Cluster, hello *longfairv1.WorkerHello) (longfairv1.Workers_ConnectClient, *longfairv1.Welcome, context.CancelFunc, error) {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	stream, err := longfairv1.NewWorkersClient(c.Conn(c.WaitLeader(ctx))).Connect(sctx)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		if w := m.GetWelcome(); w != nil {
			return stream, w, cancel, nil
		}
	}
}

// TestNodeStreamTakeover: while a worker process's stream of a node is
// alive, another process (another session) saying hello as that node is
// refused with AlreadyExists; the same process (same session) opening a
// new stream replaces its old one at once, as after a half-open
// connection; and once the holder falls silent, the other process gets
// the node.
func TestNodeStreamTakeover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	a, err := openRaw(ctx, t, c, "n1", "process-a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = openRaw(ctx, t, c, "n1", "process-b")
	wantStatus(t, "a second process as n1", err, codes.AlreadyExists)
	for _, words := range []string{"node n1", "--node-id"} {
		if !strings.Contains(status.Convert(err).Message(), words) {
			t.Errorf("the refusal %q does not say %q", status.Convert(err).Message(), words)
		}
	}
	select {
	case err := <-a.ended:
		t.Fatalf("the holder's stream ended when another process was refused: %v", err)
	default:
	}

	again, err := openRaw(ctx, t, c, "n1", "process-a")
	if err != nil {
		t.Fatalf("the same process reconnecting: %v", err)
	}
	select {
	case <-a.ended:
	case <-ctx.Done():
		t.Fatal("the replaced stream did not end")
	}

	again.mute.Store(true)
	muted := time.Now()
	for {
		b, err := openRaw(ctx, t, c, "n1", "process-b")
		if err == nil {
			b.cancel()
			break
		}
		if status.Code(err) != codes.AlreadyExists || ctx.Err() != nil {
			t.Fatalf("another process after the holder fell silent: %v", err)
		}
		if time.Since(muted) > server.WorkerSilence+10*time.Second {
			t.Fatalf("still refused %v after the holder fell silent", time.Since(muted).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
