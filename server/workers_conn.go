package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/fsm"
)

// attemptKey names one attempt of one task.
type attemptKey struct {
	job     uint64
	task    int64
	attempt int
}

func keyOfRef(r *longfairv1.AttemptRef) attemptKey {
	return attemptKey{r.GetJobId(), r.GetTask(), int(r.GetAttempt())}
}

func keyOfTask(t fsm.TaskInfo) attemptKey { return attemptKey{t.JobID, t.Task, t.Attempt} }

func (k attemptKey) ref() *longfairv1.AttemptRef {
	return &longfairv1.AttemptRef{JobId: k.job, Task: k.task, Attempt: int32(k.attempt)}
}

// workerConn is one worker's stream to this leader.
type workerConn struct {
	term    *leaderTerm
	node    string
	session string
	advert  *longfairv1.WorkerAdvert
	// from is the address the stream comes from; since, when it opened.
	from  string
	since time.Time
	// fencedWithin is how soon the worker kills its attempts after losing
	// the leader (its hello), 0 when it does not fence (checkFence).
	fencedWithin time.Duration
	// heartbeat is the stream's heartbeat interval (heartbeatFor).
	heartbeat time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc
	// call is the gRPC stream's own context, which ends as soon as the
	// worker's end of the stream is gone (ctx follows it a moment later).
	call context.Context

	lastHeard atomic.Int64 // unix nanoseconds
	// waiting is set while the receive loop waits for the event committer
	// to take a batch: the worker's messages are then unread, not missing.
	waiting atomic.Bool

	mu sync.Mutex
	// ready is set once the hello is reconciled; only then does the
	// worker get assignments and its node count for scheduling.
	ready bool
	// delivered holds the attempts this worker has been sent or reported
	// holding: an attempt is sent at most once per stream. An entry stays
	// for a while after the attempt ended (the time it ended is its
	// value; zero while it is active), so that a read of the ledger taken
	// just before the end can never send it again.
	delivered map[attemptKey]time.Time
	// killed holds the attempts a kill with report was sent for.
	killed map[attemptKey]struct{}
	// parallel holds the parallel tasks this worker holds a node of
	// (gang_conn.go), true where it is a member: a node it does not head,
	// where it runs no command and reports only the task's loss.
	parallel map[attemptKey]bool
	out      []*longfairv1.LeaderMessage
	outSig   chan struct{}
}

func (c *workerConn) isReady() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready
}

// alive reports whether the stream is open and its worker was heard from
// recently enough that the stream is not about to be closed as silent
// (sendLoop), or is still being reconciled.
func (c *workerConn) alive(now time.Time) bool {
	if c.ctx.Err() != nil || c.call.Err() != nil {
		return false
	}
	return !c.isReady() || c.waiting.Load() || now.Sub(time.Unix(0, c.lastHeard.Load())) <= c.silence()
}

// silence is how long the worker may be silent before its stream is
// closed.
func (c *workerConn) silence() time.Duration { return silentBeats * c.heartbeat }

// heartbeatFor is the heartbeat interval of a worker's stream: an eighth
// of its fence timeout, between workerHeartbeat and maxWorkerHeartbeat.
// The worker renews its lease on its attempts with each echoed beat, so
// seven beats in a row can go astray before it fences; and the beats a
// leader handles per second fall as fences grow: at the default 30s fence
// a 2s beat, a quarter of the stream messages of a 500ms one, which at
// 1,000 workers is most of an idle leader's CPU. An older worker that
// does not say its fence timeout gets workerHeartbeat.
func heartbeatFor(h *longfairv1.WorkerHello) time.Duration {
	ft := h.GetFenceTimeout()
	if ft == nil || ft.CheckValid() != nil || h.GetFencedWithin() == nil {
		return workerHeartbeat // checkFence refused an invalid one
	}
	return min(max(ft.AsDuration()/8, workerHeartbeat), maxWorkerHeartbeat)
}

// close ends the stream; the handler returns reason to the worker.
func (c *workerConn) close(reason string) {
	c.cancel(status.Error(codes.Unavailable, reason+"; reconnect"))
}

// enqueue queues messages for the send loop; it never blocks, so that a
// slow worker never holds up the scheduling loop.
func (c *workerConn) enqueue(msgs ...*longfairv1.LeaderMessage) {
	c.mu.Lock()
	c.out = append(c.out, msgs...)
	c.mu.Unlock()
	select {
	case c.outSig <- struct{}{}:
	default:
	}
}

// deliver sends the assignments this stream has not sent yet. Before the
// stream is reconciled it sends nothing: the reconciliation and the sweep
// deliver what was committed meanwhile.
func (c *workerConn) deliver(asgs []*longfairv1.Assignment) {
	c.mu.Lock()
	if !c.ready {
		c.mu.Unlock()
		return
	}
	fresh := asgs[:0:0]
	for _, a := range asgs {
		k := keyOfRef(a.GetAttempt())
		if _, ok := c.delivered[k]; ok {
			continue
		}
		c.delivered[k] = time.Time{}
		if len(a.GetNodes()) > 1 {
			c.parallel[k] = a.GetNodeIndex() > 0
		}
		fresh = append(fresh, a)
	}
	c.mu.Unlock()
	for len(fresh) > 0 {
		n, size := 0, 0
		for n < len(fresh) && n < maxAssignmentsPerMessage && (n == 0 || size+proto.Size(fresh[n]) <= maxAssignmentBytes) {
			size += proto.Size(fresh[n])
			n++
		}
		c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Assignments{Assignments: &longfairv1.Assignments{Assignments: fresh[:n]}}})
		fresh = fresh[n:]
	}
}

// An Assignments message holds at most maxAssignmentsPerMessage
// assignments and, beyond its first, maxAssignmentBytes: well under
// gRPC's 4 MiB message limit even with 64 KiB commands.
const (
	maxAssignmentsPerMessage = 1000
	maxAssignmentBytes       = 1 << 20
)

// holds reports whether the worker legitimately reports about attempt k:
// it was delivered on this stream or reconciled from the hello.
func (c *workerConn) holds(k attemptKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.delivered[k]
	return ok
}

// deliveredLinger is how long an ended attempt stays in the delivery
// record; far longer than any read of the ledger can be stale.
const deliveredLinger = time.Minute

// ended records that attempts have ended; they are never sent again.
func (c *workerConn) ended(keys []attemptKey, at time.Time) {
	c.mu.Lock()
	for _, k := range keys {
		if e, ok := c.delivered[k]; ok && e.IsZero() {
			c.delivered[k] = at
		}
	}
	c.mu.Unlock()
}

// serve runs one worker's stream until it ends, the worker replaces it,
// or this term of leadership ends.
func (t *leaderTerm) serve(stream longfairv1.Workers_ConnectServer) error {
	hello, err := recvHello(t.ctx, stream)
	if err != nil {
		return err
	}
	if err := validateHello(hello); err != nil {
		return err
	}
	// Before the stream replaces the node's current one or touches the
	// ledger: a refused hello changes nothing.
	if err := t.checkNodeBinding(stream.Context(), hello.GetAdvert().GetNodeId()); err != nil {
		return err
	}
	fencedWithin, err := t.checkFence(hello)
	if err != nil {
		return err
	}
	ad := hello.GetAdvert()
	ctx, cancel := context.WithCancelCause(t.ctx)
	defer cancel(nil)
	stop := context.AfterFunc(stream.Context(), func() { cancel(stream.Context().Err()) })
	defer stop()
	c := &workerConn{
		term: t, node: ad.GetNodeId(), session: hello.GetSession(), advert: ad, fencedWithin: fencedWithin, heartbeat: heartbeatFor(hello),
		from: ad.GetAddress(), since: time.Now(),
		ctx: ctx, cancel: cancel, call: stream.Context(),
		delivered: make(map[attemptKey]time.Time), killed: make(map[attemptKey]struct{}), parallel: make(map[attemptKey]bool),
		outSig: make(chan struct{}, 1),
	}
	if p, ok := peer.FromContext(stream.Context()); ok && p.Addr != nil {
		c.from = p.Addr.String()
	}
	c.lastHeard.Store(time.Now().UnixNano())
	if err := t.register(c); err != nil {
		return err
	}
	defer t.unregister(c)
	log := t.log.With("node", c.node, "session", c.session)
	if err := t.reconcile(c, hello); err != nil {
		log.Warn("cannot reconcile a worker's attempts with the ledger; it will reconnect", "error", err)
		return err
	}
	log.Info("worker connected", "fresh", hello.GetFresh(), "held", len(hello.GetHeld()), "pending_events", len(hello.GetPending()))

	// The receive loop ends when the stream does, which returning from
	// this handler brings about: waiting for it here would leave the end
	// of the stream to the worker.
	go func() {
		if err := c.recvLoop(stream); err != nil {
			cancel(err)
		}
	}()
	err = c.sendLoop(stream)
	cancel(err)
	cause := context.Cause(ctx)
	log.Info("worker stream ended", "reason", cause)
	if t.ctx.Err() != nil {
		return status.Error(codes.Unavailable, "this server stopped leading; find the new leader and reconnect")
	}
	if _, ok := status.FromError(cause); ok && cause != nil {
		return cause
	}
	return status.Error(codes.Unavailable, "stream closed; reconnect")
}

// recvHello waits for the worker's first message, which must be a hello.
func recvHello(ctx context.Context, stream longfairv1.Workers_ConnectServer) (*longfairv1.WorkerHello, error) {
	type result struct {
		m   *longfairv1.WorkerMessage
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := stream.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		h := r.m.GetHello()
		if h == nil {
			return nil, status.Errorf(codes.InvalidArgument, "the first message on the stream must be a hello, not %T", r.m.GetMsg())
		}
		return h, nil
	case <-time.After(helloTimeout):
		return nil, status.Errorf(codes.DeadlineExceeded, "no hello within %v of opening the stream", helloTimeout)
	case <-ctx.Done():
		return nil, status.Error(codes.Unavailable, "this server stopped leading; find the new leader and reconnect")
	case <-stream.Context().Done():
		return nil, stream.Context().Err()
	}
}

// errWorkerLeft ends the stream of a worker that said goodbye.
var errWorkerLeft = status.Error(codes.Canceled, "the worker said goodbye")

// recvLoop reads the worker's messages until the stream ends.
func (c *workerConn) recvLoop(stream longfairv1.Workers_ConnectServer) error {
	t := c.term
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		c.lastHeard.Store(time.Now().UnixNano())
		switch msg := m.GetMsg().(type) {
		case *longfairv1.WorkerMessage_Events:
			if len(msg.Events.GetEvents()) == 0 {
				continue
			}
			c.waiting.Store(true)
			select {
			case t.events <- eventBatch{c: c, events: msg.Events.GetEvents()}:
			case <-c.ctx.Done():
				return context.Cause(c.ctx)
			}
			c.waiting.Store(false)
			c.lastHeard.Store(time.Now().UnixNano())
		case *longfairv1.WorkerMessage_Heartbeat:
			// The echo renews the worker's lease on its attempts: it
			// proves this leader heard the worker after it sent seq.
			if seq := msg.Heartbeat.GetSeq(); seq > 0 {
				c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{Seq: seq}}})
			}
		case *longfairv1.WorkerMessage_Goodbye:
			// Escaped so that the reason is text the node-down entry may
			// hold (no control characters) and prints safely.
			reason := core.Escape(strings.ToValidUTF8(truncate(msg.Goodbye.GetReason(), 200), ""))
			if reason == "" {
				reason = "the worker is leaving"
			}
			t.mu.Lock()
			t.goodbye[c.node] = reason
			t.mu.Unlock()
			kick(t.members)
			return errWorkerLeft
		case *longfairv1.WorkerMessage_Hello:
			return status.Error(codes.InvalidArgument, "a second hello on the same stream: open a new stream to start over")
		default:
			return status.Errorf(codes.InvalidArgument, "unknown worker message %T: upgrade the server or the worker so that they speak the same protocol", m.GetMsg())
		}
	}
}

// sendLoop sends queued messages and heartbeats, and ends the stream when
// the worker has been silent too long.
func (c *workerConn) sendLoop(stream longfairv1.Workers_ConnectServer) error {
	tick := time.NewTicker(c.heartbeat)
	defer tick.Stop()
	// sent records whether anything went out since the last tick. The
	// worker hears from this leader at least once per heartbeat without a
	// beat of the leader's own: every beat of the worker's is echoed. So
	// a beat goes out only when a tick passed with nothing sent (the
	// worker's beats are late, or an old worker sends none): at 1,000
	// workers the redundant beats were a third of the stream's messages.
	sent := false
	for {
		c.mu.Lock()
		out := c.out
		c.out = nil
		c.mu.Unlock()
		for _, m := range out {
			if err := stream.Send(m); err != nil {
				return err
			}
			sent = true
		}
		select {
		case <-c.ctx.Done():
			return context.Cause(c.ctx)
		case <-c.outSig:
		case <-tick.C:
			if silent := time.Since(time.Unix(0, c.lastHeard.Load())); silent > c.silence() && !c.waiting.Load() {
				return status.Errorf(codes.Unavailable, "no message from the worker for %v", silent.Round(time.Millisecond))
			}
			if !sent {
				c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{}}})
			}
			sent = false
		}
	}
}

// welcome is the first message a reconciled worker gets.
func (t *leaderTerm) welcome(c *workerConn) *longfairv1.LeaderMessage {
	return &longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Welcome{Welcome: &longfairv1.Welcome{
		LeaderId: t.s.cfg.NodeID, HeartbeatInterval: durationpb.New(c.heartbeat),
	}}}
}

// validateHello checks what a worker says about itself.
func validateHello(h *longfairv1.WorkerHello) error {
	ad := h.GetAdvert()
	if ad == nil {
		return status.Error(codes.InvalidArgument, "hello has no advert: the worker must say which node it is")
	}
	cmd := &fsm.NodeUp{ID: ad.GetNodeId(), Capacity: ad.GetResources(), Class: ad.GetNodeClass(), Account: ad.GetAccount(), Address: ad.GetAddress(), Confinement: ad.GetConfinement()}
	if _, err := fsm.Encode(0, cmd); err != nil {
		return status.Errorf(codes.InvalidArgument, "the worker's advert is not a valid node: %v", errorMessage(err))
	}
	if h.GetSession() == "" {
		return status.Error(codes.InvalidArgument, "hello has no session id")
	}
	return nil
}

// checkFence refuses a worker that would still run its attempts when this
// leader reruns them elsewhere: it must fence (kill them after losing the
// leader) at least fenceMargin before WorkerLossTimeout. It returns how
// soon the worker fences, 0 for an older worker that does not; register
// records it once the stream is taken, so a refused hello changes nothing.
func (t *leaderTerm) checkFence(h *longfairv1.WorkerHello) (time.Duration, error) {
	node := h.GetAdvert().GetNodeId()
	loss := time.Duration(t.s.cfg.WorkerLossTimeout)
	fw := h.GetFencedWithin()
	if fw == nil {
		// An older worker, which does not fence: taken, so that a rolling
		// upgrade works, but its tasks can overlap their reruns.
		t.warnOnce(node, "no-fence", "the worker does not fence its tasks (an older version): if it is cut off, its tasks may run at the same time as their reruns; upgrade it")
		return 0, nil
	}
	if err := fw.CheckValid(); err != nil || fw.AsDuration() <= 0 {
		return 0, status.Errorf(codes.InvalidArgument, "hello's fenced_within is %v: give the worker's fence timeout plus its kill grace", fw)
	}
	d := fw.AsDuration()
	if ft := h.GetFenceTimeout(); ft != nil && (ft.CheckValid() != nil || ft.AsDuration() <= 0 || ft.AsDuration() > d) {
		return 0, status.Errorf(codes.InvalidArgument, "hello's fence_timeout is %v, fenced_within %v: give the worker's fence timeout, which fenced_within (the fence timeout plus the kill grace) includes", ft, fw)
	}
	if d+fenceMargin > loss {
		return 0, status.Errorf(codes.FailedPrecondition,
			"worker %s kills its tasks %v after it loses the leader (--fence-timeout plus --kill-grace), but the servers rerun them elsewhere %v after (worker_loss_timeout): "+
				"its tasks could run twice at once; the worker must fence at least %v before the servers rerun, so lower its --fence-timeout or --kill-grace to %v in all, or raise the servers' worker_loss_timeout to at least %v",
			node, d, loss, fenceMargin, loss-fenceMargin, d+fenceMargin)
	}
	return d, nil
}

func errorMessage(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	var fe *fsm.Error
	if errors.As(err, &fe) {
		return fe.Msg
	}
	return err.Error()
}

// taskEventFromProto turns a worker's event into the ledger's.
func taskEventFromProto(e *longfairv1.TaskEvent) (fsm.TaskEvent, error) {
	r := e.GetAttempt()
	ev := fsm.TaskEvent{JobID: r.GetJobId(), Task: r.GetTask(), Attempt: int(r.GetAttempt())}
	switch e.GetKind() {
	case longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED:
		ev.Kind = fsm.TaskStarted
	case longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED:
		ev.Kind, ev.ExitCode = fsm.TaskExited, e.GetExitCode()
	case longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST:
		// With a runtime: an attempt the worker fenced, charged for that.
		ev.Kind = fsm.TaskLost
	default:
		return ev, fmt.Errorf("unknown event kind %v", e.GetKind())
	}
	if d := e.GetRuntime(); d != nil {
		// On a start: how long the task had run when it was sent.
		if err := d.CheckValid(); err != nil {
			return ev, fmt.Errorf("runtime: %w", err)
		}
		ev.Runtime = max(d.AsDuration(), 0)
	}
	if ev.Kind != fsm.TaskStarted {
		// A measurement that cannot be is left out, not the event: the
		// end it reports is what the ledger needs (fsm/task_usage.go).
		if c := e.GetCpuSeconds(); c >= 0 && c <= 1e17 {
			ev.CPUSeconds = c
		}
		ev.PeakMemBytes, ev.OOMKilled = max(e.GetPeakMemBytes(), 0), e.GetOomKilled()
	}
	if ev.JobID == 0 || ev.Task < 0 || ev.Task >= fsm.MaxTasksPerJob || ev.Attempt < 1 || ev.Attempt > fsm.MaxAttemptsLimit {
		return ev, fmt.Errorf("attempt %d of task %d of job %d cannot exist", ev.Attempt, ev.Task, ev.JobID)
	}
	return ev, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
