package server_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// Two workers join; an array's tasks run on them, each exactly once, and
// each attempt is charged once.
func TestWorkersRunAnArrayExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil)
	testcluster.Worker(t, c, "w2", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1", "w2")

	runs := filepath.Join(t.TempDir(), "runs")
	script := fmt.Sprintf(`echo "$LONGFAIR_TASK_ID" >> %s`, runs)
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "array", 20, map[string]float64{"cpu": 1}, time.Minute, script))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	j := testcluster.WaitJobEnded(ctx, t, c, id)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetSucceededTasks() != 20 {
		t.Fatalf("job = %v", j)
	}
	lines := testcluster.RunLog(t, runs)
	if len(lines) != 20 {
		t.Fatalf("tasks ran %d times, want 20: %v", len(lines), lines)
	}
	for i, l := range lines {
		if i > 0 && lines[i-1] == l {
			t.Fatalf("task %s ran twice", l)
		}
	}
	var charged int64
	nodes := map[string]int{}
	for _, task := range testcluster.AllTasks(ctx, t, c, id) {
		if task.GetAttempt() != 1 || task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
			t.Errorf("task %d: attempt %d state %v, want one successful attempt", task.GetIndex(), task.GetAttempt(), task.GetState())
		}
		charged += task.GetChargedMicroSu()
		nodes[task.GetNode()]++
	}
	if charged != j.GetChargedMicroSu() {
		t.Fatalf("tasks were charged %d micro-SU, the job %d", charged, j.GetChargedMicroSu())
	}
	if len(nodes) != 2 {
		t.Errorf("tasks ran on %v, want both workers used", nodes)
	}
}

// Cancelling a job stops its running tasks on their workers; they are
// charged for the time they ran and the job ends cancelled.
func TestCancelStopsRunningTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	ag := testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	resp, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "long", 6, map[string]float64{"cpu": 1}, time.Hour, "sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "4 tasks running", func() bool { return ag.Running() == 4 })
	time.Sleep(200 * time.Millisecond)
	if _, err := jobs.CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: id}); err != nil {
		t.Fatal(err)
	}
	j := testcluster.WaitJobEnded(ctx, t, c, id)
	if j.GetState() != longfairv1.JobState_JOB_STATE_CANCELLED || j.GetCancelledTasks() != 6 {
		t.Fatalf("job = %v, want cancelled with its 6 tasks cancelled", j)
	}
	if ag.Running() != 0 {
		t.Fatalf("%d tasks still run on the worker", ag.Running())
	}
	for _, task := range testcluster.AllTasks(ctx, t, c, id) {
		rt := task.GetRuntime().AsDuration()
		if task.GetExitCode() != 128+15 || rt <= 0 || rt > 30*time.Second || task.GetChargedMicroSu() <= 0 {
			t.Errorf("task %d: exit %d, runtime %v, charged %d; want stopped by SIGTERM and charged for the time it ran",
				task.GetIndex(), task.GetExitCode(), rt, task.GetChargedMicroSu())
		}
	}
}

// A worker that shuts down says goodbye: its node goes down at once and
// its tasks run again on another worker.
func TestWorkerShutdownRequeuesItsTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	w1 := testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	resp, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "moving", 4, map[string]float64{"cpu": 1}, time.Hour, "sleep 1"))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "4 tasks running on w1", func() bool { return w1.Running() == 4 })
	start := time.Now()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	if err := w1.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	scancel()
	testcluster.WaitFor(ctx, t, "w1 down", func() bool {
		for _, n := range leader.FSM().Nodes() {
			if n.ID == "w1" {
				return !n.Up
			}
		}
		return false
	})
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the node went down %v after its worker said goodbye", d)
	}
	testcluster.Worker(t, c, "w2", nil)
	j := testcluster.WaitJobEnded(ctx, t, c, id)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job = %v", j)
	}
	for _, task := range testcluster.AllTasks(ctx, t, c, id) {
		if task.GetNode() != "w2" || task.GetAttempt() != 2 {
			t.Errorf("task %d ended as attempt %d on %s, want attempt 2 on w2", task.GetIndex(), task.GetAttempt(), task.GetNode())
		}
		lost, err := leader.FSM().Attempt(id, task.GetIndex(), 1)
		// Charged for exactly the time it ran before the worker left, which
		// on a fast shutdown can be a millisecond or nothing.
		if err != nil || lost.State != fsm.TaskLostState || lost.Node != "w1" || lost.Charged != costOf(t, leader.FSM(), id, lost.Runtime) {
			t.Errorf("first attempt of task %d = %+v, %v; want lost on w1 and charged for its runtime", task.GetIndex(), lost, err)
		}
	}
}

// A worker whose stream ends and does not come back within the grace
// period has its node marked down at once, but its attempts are lost only
// once the worker has surely fenced them: the loss timeout after it was
// last heard. They are charged up to the fence.
func TestBrokenStreamMarksTheNodeDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w, k := startedAttempt(ctx, t, c, leader)
	time.Sleep(300 * time.Millisecond)
	w.heartbeat() // its last sign of life
	time.Sleep(100 * time.Millisecond)
	w.disconnect() // gossip still says it is alive
	gone := time.Now()
	started := attemptState(t, leader.FSM(), k).StartedAt
	testcluster.WaitFor(ctx, t, "r1 down", func() bool {
		for _, n := range leader.FSM().Nodes() {
			if n.ID == "r1" {
				return !n.Up
			}
		}
		return false
	})
	if d := time.Since(gone); d < server.WorkerStreamGrace || d > server.WorkerStreamGrace+3*time.Second {
		t.Fatalf("the node went down %v after the stream ended; want just after the %v grace", d, server.WorkerStreamGrace)
	}
	if st := attemptState(t, leader.FSM(), k).State; st != fsm.TaskRunning {
		t.Fatalf("the attempt is %v as soon as its node went down; the worker may still run it until it fences it", st)
	}
	testcluster.WaitFor(ctx, t, "the attempt lost", func() bool { return attemptState(t, leader.FSM(), k).State == fsm.TaskLostState })
	loss := time.Duration(leader.Config().WorkerLossTimeout)
	// The last heartbeat came 0.1 s before the stream ended.
	if d := time.Since(gone); d < loss-100*time.Millisecond || d > loss+3*time.Second {
		t.Fatalf("the attempt was lost %v after the stream ended; want just after the %v loss timeout", d, loss)
	}
	// Charged up to when the worker surely fenced it (its last message
	// plus what its hello said), not for the whole loss timeout.
	lost := attemptState(t, leader.FSM(), k)
	last := ledger.Time(gone.UnixNano()).Sub(started)
	if lost.Runtime > last+w.fencedWithin || lost.Runtime < 300*time.Millisecond+w.fencedWithin {
		t.Fatalf("the lost attempt was charged for %v; it ran for 0.3s to %v before its worker went quiet and was fenced %v after that", lost.Runtime, last, w.fencedWithin)
	}
}

// A worker that would fence its tasks later than the servers rerun them is
// refused, with what to change.
func TestWorkerFencingTooLateIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w := newProtoWorker(t, c, "late", map[string]float64{"cpu": 2})
	loss := time.Duration(leader.Config().WorkerLossTimeout)
	w.fencedWithin = loss - server.FenceMargin/2
	stream, err := longfairv1.NewWorkersClient(c.Conn(leader)).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hello := &longfairv1.WorkerHello{Advert: w.advert, Session: "s", Fresh: true, FencedWithin: durationpb.New(w.fencedWithin)}
	if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "--fence-timeout") || !strings.Contains(err.Error(), "worker_loss_timeout") {
		t.Fatalf("hello fencing %v after a %v loss timeout: %v; want FailedPrecondition saying which settings to change", w.fencedWithin, loss, err)
	}
	for _, n := range leader.FSM().Nodes() {
		if n.ID == "late" {
			t.Fatalf("the refused worker's node is in the ledger: %+v", n)
		}
	}
}

// A worker cannot report about attempts placed on another node.
func TestEventsAboutAnotherNodeAreIgnored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	r1 := newProtoWorker(t, c, "r1", map[string]float64{"cpu": 1})
	r1.connect(ctx, true, nil, nil)
	testcluster.WaitNodesUp(ctx, t, leader, "r1")
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "one", 1, map[string]float64{"cpu": 1}, time.Hour, "true"))
	if err != nil {
		t.Fatal(err)
	}
	k := server.Key(resp.GetJob().GetId(), 0, 1)
	r1.assignments(ctx, 1)
	r2 := newProtoWorker(t, c, "r2", map[string]float64{"cpu": 1})
	r2.connect(ctx, true, nil, nil)
	r2.send(r2.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, time.Minute))
	r2.waitAck(ctx, r2.seq)
	if st := attemptState(t, leader.FSM(), k).State; st != fsm.TaskAssigned {
		t.Fatalf("r2's report about r1's attempt made it %s", st)
	}
}

// A task's output can be read through any server, while it runs
// (following) and after it ended.
func TestReadTaskOutputThroughAServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "talk", 1, map[string]float64{"cpu": 1}, time.Hour,
		`echo first; sleep 0.5; echo second; echo err >&2`))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	f := c.Follower(ctx)
	testcluster.WaitFor(ctx, t, "the task to start", func() bool {
		ts, _, _ := f.FSM().Tasks(id, 0, 1)
		return len(ts) == 1
	})
	read := func(req *longfairv1.ReadTaskOutputRequest) (string, error) {
		s, err := longfairv1.NewWorkersClient(c.Conn(f)).ReadTaskOutput(ctx, req)
		if err != nil {
			return "", err
		}
		var out []byte
		for {
			chunk, err := s.Recv()
			if err == io.EOF {
				return string(out), nil
			}
			if err != nil {
				return string(out), err
			}
			if chunk.GetOffset() != req.GetOffset()+int64(len(out)) {
				return "", fmt.Errorf("chunk at offset %d after %d bytes from offset %d", chunk.GetOffset(), len(out), req.GetOffset())
			}
			out = append(out, chunk.GetData()...)
		}
	}
	followed, err := read(&longfairv1.ReadTaskOutputRequest{JobId: id, Task: 0, Follow: true})
	if err != nil || followed != "first\nsecond\n" {
		t.Fatalf("followed stdout %q, %v", followed, err)
	}
	stderr, err := read(&longfairv1.ReadTaskOutputRequest{JobId: id, Task: 0, Attempt: 1, Stream: longfairv1.OutputStream_OUTPUT_STREAM_STDERR})
	if err != nil || stderr != "err\n" {
		t.Fatalf("stderr %q, %v", stderr, err)
	}
	tail, err := read(&longfairv1.ReadTaskOutputRequest{JobId: id, Task: 0, Offset: 6})
	if err != nil || tail != "second\n" {
		t.Fatalf("from offset 6: %q, %v", tail, err)
	}
	if _, err := read(&longfairv1.ReadTaskOutputRequest{JobId: id, Task: 0, Attempt: 2}); status.Code(err) != codes.NotFound {
		t.Fatalf("attempt 2: %v, want NotFound", err)
	}
	if _, err := read(&longfairv1.ReadTaskOutputRequest{JobId: id, Task: 5}); status.Code(err) != codes.NotFound {
		t.Fatalf("task 5: %v, want NotFound", err)
	}
}

// A task that outlives its walltime is stopped by its worker; the runtime
// the worker measured (a little over the walltime) is clamped to the
// walltime, which is what it is charged for.
func TestWalltimeIsEnforcedAndCharged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	// The shortest walltime the API accepts, so the test is quick.
	walltime := longfairv1.MinWalltime
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "overrun", 1, map[string]float64{"cpu": 1}, walltime, "sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	j := testcluster.WaitJobEnded(ctx, t, c, resp.GetJob().GetId())
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the job ended %v after submission; its walltime is %v", time.Since(start), walltime)
	}
	task := testcluster.AllTasks(ctx, t, c, j.GetId())[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_FAILED || task.GetExitCode() != 128+15 {
		t.Fatalf("job %v, task exit %d; want failed by SIGTERM", j.GetState(), task.GetExitCode())
	}
	if rt := task.GetRuntime().AsDuration(); rt != walltime {
		t.Fatalf("runtime %v, want exactly the walltime %v", rt, walltime)
	}
	// 1 SU per core-hour: a second of one core, in micro-SU rounded half
	// up.
	if want := int64(math.Floor(walltime.Seconds()/3600*1e6 + 0.5)); task.GetChargedMicroSu() != want {
		t.Fatalf("charged %d micro-SU, want %d", task.GetChargedMicroSu(), want)
	}
}

// When the leader stops, the workers find the new one, reconnect and
// reconcile; every task still ends and every attempt is charged once.
func TestWorkersFollowANewLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	w1 := testcluster.Worker(t, c, "w1", nil)
	w2 := testcluster.Worker(t, c, "w2", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1", "w2")
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "array", 24, map[string]float64{"cpu": 1}, time.Minute, "sleep 0.3"))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "tasks to run on both workers", func() bool { return w1.Running() > 0 && w2.Running() > 0 })
	old := leader.NodeID()
	c.Stop(c.Index(leader))
	stopped := time.Now()
	next := c.WaitLeader(ctx)
	testcluster.WaitFor(ctx, t, "both workers connected to the new leader", func() bool {
		return w1.Leader() == next.NodeID() && w2.Leader() == next.NodeID()
	})
	t.Logf("workers followed %s to %s in %v", old, next.NodeID(), time.Since(stopped))
	j := testcluster.WaitJobEnded(ctx, t, c, id)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetSucceededTasks() != 24 {
		t.Fatalf("job = %v", j)
	}
	var charged int64
	entries, _, err := next.FSM().Journal(account, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Kind == ledger.EntryCharge {
			if seen[e.ID] {
				t.Fatalf("%s charged twice", e.ID)
			}
			seen[e.ID] = true
			charged += int64(e.Amount)
		}
	}
	if charged != j.GetChargedMicroSu() {
		t.Fatalf("journal charges %d, job %d", charged, j.GetChargedMicroSu())
	}
}

// A new leader does not know when the old one last heard a worker, so it
// counts the loss timeout from the start of its own term: an attempt whose
// worker went quiet just before the change of leader is not lost before
// the worker has surely fenced it, however the old leader's time ran.
func TestNewLeaderCountsTheLossTimeoutFromItsTerm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	w, k := startedAttempt(ctx, t, c, leader)
	started := attemptState(t, leader.FSM(), k).StartedAt
	w.disconnect() // last heard now; gossip still says it is alive
	quiet := time.Now()
	time.Sleep(time.Second)
	c.Stop(c.Index(leader))
	stopped := time.Now()
	next := c.WaitLeader(ctx)
	testcluster.WaitFor(ctx, t, "the attempt lost", func() bool { return attemptState(t, next.FSM(), k).State == fsm.TaskLostState })
	lost := attemptState(t, next.FSM(), k)
	loss := time.Duration(next.Config().WorkerLossTimeout)
	if at := time.Unix(0, int64(lost.EndedAt)); at.Before(stopped.Add(loss)) {
		t.Fatalf("the new leader lost the attempt %v after the old one stopped, before its %v loss timeout had passed in its own term", at.Sub(stopped).Round(time.Millisecond), loss)
	}
	// It ran at least until its worker went quiet.
	if ran := ledger.Time(quiet.UnixNano()).Sub(started); lost.Runtime < ran {
		t.Fatalf("the lost attempt was charged for %v; it ran at least %v", lost.Runtime, ran)
	}
}

// A worker that fenced an attempt (its supervisor killed it after the
// worker lost the leader) reports it lost with the runtime it measured;
// the ledger charges exactly that and requeues the task, and the same
// report sent again when the worker reconnects is not charged twice.
func TestFencedAttemptIsChargedItsReportedRuntimeOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w, k := startedAttempt(ctx, t, c, leader)
	id := k.Job()
	const ran = 1234 * time.Millisecond
	fenced := w.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST, 128+15, ran)
	w.send(fenced)
	w.waitAck(ctx, w.seq)
	lost := attemptState(t, leader.FSM(), k)
	if lost.State != fsm.TaskLostState || lost.Runtime != ran || lost.Charged != costOf(t, leader.FSM(), id, ran) {
		t.Fatalf("fenced attempt = %+v; want lost, charged for the %v the worker measured", lost, ran)
	}
	// Reconnecting, the worker reports it again, as if the ack was lost.
	w.disconnect()
	w.connect(ctx, false, []*longfairv1.HeldAttempt{{Attempt: k.Ref()}}, []*longfairv1.TaskEvent{fenced})
	testcluster.WaitFor(ctx, t, "the task rerun", func() bool {
		_, err := leader.FSM().Attempt(id, 0, 2)
		return err == nil
	})
	j, err := leader.FSM().Job(id)
	if err != nil {
		t.Fatal(err)
	}
	if again := attemptState(t, leader.FSM(), k); again.Charged != lost.Charged || j.Charged != lost.Charged {
		t.Fatalf("after the report came again: attempt charged %d, job %d; want %d once", again.Charged, j.Charged, lost.Charged)
	}
}

// startedAttempt connects a protocol worker r1 (2 cpu) to leader, submits
// a one-task job of a fresh account to it, and reports the attempt
// started; it returns the worker and the running attempt.
func startedAttempt(ctx context.Context, t *testing.T, c *testcluster.Cluster, leader *server.Server) (*protoWorker, server.AttemptKey) {
	t.Helper()
	account, user := setupAccount(ctx, t, c, "physics")
	w := newProtoWorker(t, c, "r1", map[string]float64{"cpu": 2})
	w.connect(ctx, true, nil, nil)
	testcluster.WaitNodesUp(ctx, t, leader, "r1")
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "one", 1, map[string]float64{"cpu": 1}, time.Hour, "true"))
	if err != nil {
		t.Fatal(err)
	}
	k := server.Key(resp.GetJob().GetId(), 0, 1)
	w.assignments(ctx, 1)
	w.send(w.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED, 0, 0))
	w.waitAck(ctx, w.seq)
	return w, k
}
