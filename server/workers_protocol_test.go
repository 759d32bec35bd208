package server_test

import (
	"context"
	"io"
	"log"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/ops/membership"
	"github.com/longfair/longfair/server"
)

// protoWorker speaks the worker protocol by hand, so that a test can say
// exactly what a worker holds when it reconnects. It is a gossip member
// like a real worker.
type protoWorker struct {
	t      testing.TB
	c      *testcluster.Cluster
	advert *longfairv1.WorkerAdvert
	ml     *memberlist.Memberlist
	seq    uint64
	// fencedWithin is what its hellos say about when it fences.
	fencedWithin time.Duration

	cancel context.CancelFunc
	stream longfairv1.Workers_ConnectClient
	msgs   chan *longfairv1.LeaderMessage
	// sendMu serializes sends: the test and the heartbeat answers share
	// the stream, and a gRPC stream takes one sender at a time.
	sendMu sync.Mutex
}

func (w *protoWorker) sendMsg(m *longfairv1.WorkerMessage) error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	return w.stream.Send(m)
}

type protoDelegate struct{ meta []byte }

func (d protoDelegate) NodeMeta(int) []byte             { return d.meta }
func (d protoDelegate) NotifyMsg([]byte)                {}
func (d protoDelegate) GetBroadcasts(int, int) [][]byte { return nil }
func (d protoDelegate) LocalState(bool) []byte          { return nil }
func (d protoDelegate) MergeRemoteState([]byte, bool)   {}

func newProtoWorker(t testing.TB, c *testcluster.Cluster, id string, resources map[string]float64) *protoWorker {
	t.Helper()
	ad := &longfairv1.WorkerAdvert{Version: 1, Role: server.RoleWorker, NodeId: id, Resources: resources, Address: "127.0.0.1:1"}
	meta, err := proto.Marshal(ad)
	if err != nil {
		t.Fatal(err)
	}
	mc := memberlist.DefaultLANConfig()
	membership.Tune(mc)
	mc.Name, mc.BindAddr, mc.BindPort = id, "127.0.0.1", 0
	mc.Delegate = protoDelegate{meta: meta}
	mc.Logger = log.New(io.Discard, "", 0)
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ml.Join([]string{c.Running()[0].GossipAddr()}); err != nil {
		t.Fatal(err)
	}
	w := &protoWorker{t: t, c: c, advert: ad, ml: ml, fencedWithin: time.Second}
	t.Cleanup(func() {
		w.disconnect()
		ml.Leave(time.Second)
		ml.Shutdown()
	})
	return w
}

// connect opens a stream to the leader with a hello and waits for the
// welcome.
func (w *protoWorker) connect(ctx context.Context, fresh bool, held []*longfairv1.HeldAttempt, pending []*longfairv1.TaskEvent) {
	w.t.Helper()
	leader := w.c.WaitLeader(ctx)
	sctx, cancel := context.WithCancel(ctx)
	stream, err := longfairv1.NewWorkersClient(w.c.Conn(leader)).Connect(sctx)
	if err != nil {
		cancel()
		w.t.Fatal(err)
	}
	hello := &longfairv1.WorkerHello{
		Advert: w.advert, Session: "s-" + strconv.FormatBool(fresh), Fresh: fresh, Held: held, Pending: pending,
		FencedWithin: durationpb.New(w.fencedWithin),
	}
	if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
		cancel()
		w.t.Fatal(err)
	}
	w.sendMu.Lock()
	w.cancel, w.stream = cancel, stream
	w.sendMu.Unlock()
	w.msgs = make(chan *longfairv1.LeaderMessage, 1024)
	go func(msgs chan *longfairv1.LeaderMessage) {
		defer close(msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			if m.GetHeartbeat() != nil {
				// Answer, as a live worker does.
				w.sendMsg(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{}}})
				continue
			}
			msgs <- m
		}
	}(w.msgs)
	if m := w.next(ctx); m.GetWelcome() == nil {
		w.t.Fatalf("first message %v, want a welcome", m)
	}
}

func (w *protoWorker) disconnect() {
	if w.cancel != nil {
		w.cancel()
		for range w.msgs {
		}
		w.cancel = nil
	}
}

// next returns the next message that is not a heartbeat.
func (w *protoWorker) next(ctx context.Context) *longfairv1.LeaderMessage {
	w.t.Helper()
	select {
	case m, ok := <-w.msgs:
		if !ok {
			w.t.Fatal("the leader closed the stream")
		}
		return m
	case <-ctx.Done():
		w.t.Fatal("no message from the leader")
		return nil
	}
}

// assignments collects the assignments that arrive until n have, skipping
// acks, and returns them by attempt key.
func (w *protoWorker) assignments(ctx context.Context, n int) map[server.AttemptKey]*longfairv1.Assignment {
	w.t.Helper()
	got := map[server.AttemptKey]*longfairv1.Assignment{}
	for len(got) < n {
		m := w.next(ctx)
		if m.GetKill() != nil {
			w.t.Fatalf("unexpected kill %v", m.GetKill())
		}
		for _, a := range m.GetAssignments().GetAssignments() {
			k := server.KeyOfRef(a.GetAttempt())
			if _, dup := got[k]; dup {
				w.t.Fatalf("attempt %+v delivered twice on one stream", k)
			}
			got[k] = a
		}
	}
	return got
}

func (w *protoWorker) event(k server.AttemptKey, kind longfairv1.TaskEventKind, code int32, runtime time.Duration) *longfairv1.TaskEvent {
	w.seq++
	return &longfairv1.TaskEvent{Seq: w.seq, Attempt: k.Ref(), Kind: kind, ExitCode: code, Runtime: durationpb.New(runtime)}
}

func (w *protoWorker) send(events ...*longfairv1.TaskEvent) {
	w.t.Helper()
	if err := w.sendMsg(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Events{Events: &longfairv1.WorkerEvents{Events: events}}}); err != nil {
		w.t.Fatal(err)
	}
}

// heartbeat sends a heartbeat, as a live worker does.
func (w *protoWorker) heartbeat() {
	w.t.Helper()
	if err := w.sendMsg(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{}}}); err != nil {
		w.t.Fatal(err)
	}
}

// waitAck waits for an acknowledgement of seq.
func (w *protoWorker) waitAck(ctx context.Context, seq uint64) {
	w.t.Helper()
	for {
		m := w.next(ctx)
		if m.GetAck().GetAckedSeq() >= seq {
			return
		}
	}
}

func attemptState(t *testing.T, f *fsm.FSM, k server.AttemptKey) fsm.TaskInfo {
	t.Helper()
	ti, err := f.Attempt(k.Job(), k.Task(), k.Attempt())
	if err != nil {
		t.Fatalf("attempt %+v: %v", k, err)
	}
	return ti
}

// costOf is what the ledger should charge for one task of job running for
// runtime: computed here from the job's demand and the cluster's billing
// weights, not read back from the charge itself. (A lost attempt that ran a
// few milliseconds may cost less than a micro-SU and round to nothing.)
func costOf(t *testing.T, f *fsm.FSM, job uint64, runtime time.Duration) ledger.SU {
	t.Helper()
	ji, err := f.Job(job)
	if err != nil {
		t.Fatalf("job %d: %v", job, err)
	}
	s := f.Settings()
	demand, weights := ledger.NewVector(len(s.Resources)), make(ledger.BillingWeights, len(s.Resources))
	for j, name := range s.Resources {
		demand[j], weights[j] = ji.Demand[name], s.BillingWeights[name]
	}
	cost, err := ledger.Cost(runtime, demand, weights, s.BillingRule)
	if err != nil {
		t.Fatalf("cost of job %d for %v: %v", job, runtime, err)
	}
	return cost
}

// Reconnecting: the same process gets again what it never received, an
// attempt it ran and no longer holds is lost, one the ledger does not know
// is killed; a new process loses everything it does not hold.
func TestReconcileResendsLosesAndKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	w := newProtoWorker(t, c, "r1", map[string]float64{"cpu": 4, "mem": 1 << 30})
	w.connect(ctx, true, nil, nil)
	testcluster.WaitNodesUp(ctx, t, leader, "r1")

	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "three", 3, map[string]float64{"cpu": 1}, time.Hour, "true"))
	if err != nil {
		t.Fatal(err)
	}
	job := resp.GetJob().GetId()
	got := w.assignments(ctx, 3)
	for i := range int64(3) {
		a := got[server.Key(job, i, 1)]
		if a == nil || a.GetCommand()[0] != "true" || a.GetAccount() != account || a.GetUser() != user || a.GetWalltime().AsDuration() != time.Hour || a.GetDemand()["cpu"] != 1 {
			t.Fatalf("assignment of task %d = %v", i, a)
		}
	}
	t0 := server.Key(job, 0, 1)
	w.send(w.event(t0, longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED, 0, 0))
	w.waitAck(ctx, w.seq)
	if st := attemptState(t, leader.FSM(), t0).State; st != fsm.TaskRunning {
		t.Fatalf("task 0 is %s after its start was acknowledged", st)
	}

	// The same process reconnects holding only an attempt of a job the
	// ledger never placed here.
	w.disconnect()
	stray := server.Key(999, 0, 1)
	w.connect(ctx, false, []*longfairv1.HeldAttempt{{Attempt: stray.Ref(), Running: true}}, nil)
	var kill *longfairv1.Kill
	resent := map[server.AttemptKey]bool{}
	for kill == nil || len(resent) < 3 {
		m := w.next(ctx)
		if k := m.GetKill(); k != nil {
			kill = k
		}
		for _, a := range m.GetAssignments().GetAssignments() {
			resent[server.KeyOfRef(a.GetAttempt())] = true
		}
	}
	if kill.GetReport() || len(kill.GetAttempts()) != 1 || server.KeyOfRef(kill.GetAttempts()[0]) != stray {
		t.Fatalf("kill = %v, want the stray attempt killed without a report", kill)
	}
	// Tasks 1 and 2 were never started: sent again as the same attempt.
	// Task 0 had started and the worker no longer holds it: lost, and
	// placed again as attempt 2.
	for _, k := range []server.AttemptKey{server.Key(job, 1, 1), server.Key(job, 2, 1), server.Key(job, 0, 2)} {
		if !resent[k] {
			t.Fatalf("got %v, want %+v among them", resent, k)
		}
	}
	if lost := attemptState(t, leader.FSM(), t0); lost.State != fsm.TaskLostState || lost.Runtime <= 0 || lost.Charged != costOf(t, leader.FSM(), job, lost.Runtime) {
		t.Fatalf("task 0 attempt 1 = %+v, want lost and charged for the time it ran (%v)", lost, costOf(t, leader.FSM(), job, lost.Runtime))
	}

	// A new process on the node: what it does not hold is lost.
	w.disconnect()
	w.connect(ctx, true, nil, nil)
	got = w.assignments(ctx, 3)
	for _, k := range []server.AttemptKey{server.Key(job, 0, 3), server.Key(job, 1, 2), server.Key(job, 2, 2)} {
		if got[k] == nil {
			t.Fatalf("after a fresh hello got %v, want %+v among them", got, k)
		}
	}
	// A late report about a lost attempt changes nothing.
	old := server.Key(job, 1, 1)
	w.send(w.event(old, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, time.Second))
	w.waitAck(ctx, w.seq)
	if st := attemptState(t, leader.FSM(), old).State; st != fsm.TaskLostState {
		t.Fatalf("a late exit turned a lost attempt into %s", st)
	}

	// Finish the job; every attempt is charged once, lost ones included.
	for k := range got {
		w.send(w.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED, 0, 0), w.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, 90*time.Second))
	}
	// A duplicate of the last exit is acknowledged and ignored.
	for k := range got {
		w.send(w.event(k, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, 90*time.Second))
		break
	}
	w.waitAck(ctx, w.seq)
	j := testcluster.WaitJobEnded(ctx, t, c, job)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job = %v", j)
	}
	entries, _, err := leader.FSM().Journal(account, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	charges := map[string]int{}
	var sum int64
	for _, e := range entries {
		if e.Kind == ledger.EntryCharge {
			charges[e.ID]++
			sum += int64(e.Amount)
		}
	}
	// Task 0 was lost twice, tasks 1 and 2 once, and each then succeeded.
	if len(charges) != 7 {
		t.Fatalf("charges %v, want one per attempt (4 lost, 3 succeeded)", charges)
	}
	for id, n := range charges {
		if n != 1 {
			t.Fatalf("%s charged %d times", id, n)
		}
	}
	if sum != j.GetChargedMicroSu() {
		t.Fatalf("journal charges %d, job says %d", sum, j.GetChargedMicroSu())
	}
}
