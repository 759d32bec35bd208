package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// welcomeTimeout bounds how long a hello waits for its welcome: the
// leader reconciles the worker's attempts with the ledger first, which
// takes a Raft commit or two.
const welcomeTimeout = 15 * time.Second

// defaultHeartbeat is used when the leader's welcome sets none.
const defaultHeartbeat = 500 * time.Millisecond

// watchdogTick is how often the stream's silence is checked.
const watchdogTick = 100 * time.Millisecond

// maxEventsPerMessage bounds one WorkerEvents message.
const maxEventsPerMessage = 1000

// runSession runs one stream to the leader at addr until it fails or ctx
// ends; welcomed reports whether the leader accepted the hello.
func (ag *Agent) runSession(ctx context.Context, leaderID, addr string) (welcomed bool, err error) {
	conn, err := ag.leaders.conn(addr)
	if err != nil {
		return false, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := longfairv1.NewWorkersClient(conn).Connect(sctx)
	if err != nil {
		return false, err
	}
	held, pending, last := ag.tasks.snapshot()
	hello := &longfairv1.WorkerHello{
		Advert: ag.advert, Session: ag.session, Fresh: ag.fresh.Load(), Held: held, Pending: pending,
		FencedWithin: durationpb.New(ag.cfg.FenceTimeout + ag.cfg.KillGrace),
		FenceTimeout: durationpb.New(ag.cfg.FenceTimeout),
	}
	// The welcome answers the hello: the leader heard this worker after
	// helloSent.
	helloSent := monoNow()
	if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
		return false, fmt.Errorf("send hello: %w", err)
	}

	// The watchdog ends a stream that has gone silent: a leader that died
	// without closing its connections, or a network partition.
	var lastRecv, silenceNS atomic.Int64
	lastRecv.Store(time.Now().UnixNano())
	silenceNS.Store(int64(welcomeTimeout))
	watchdogDone := make(chan struct{})
	go func() {
		defer close(watchdogDone)
		t := time.NewTicker(watchdogTick)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				if time.Since(time.Unix(0, lastRecv.Load())) > time.Duration(silenceNS.Load()) {
					ag.log.Warn("the stream to the leader went silent; reconnecting", "leader", leaderID)
					cancel()
					return
				}
			}
		}
	}()
	defer func() {
		cancel()
		<-watchdogDone
	}()

	first, err := stream.Recv()
	if err != nil {
		return false, fmt.Errorf("wait for welcome: %w", err)
	}
	w := first.GetWelcome()
	if w == nil {
		return false, fmt.Errorf("the leader answered the hello with %T instead of a welcome", first.GetMsg())
	}
	// The leader sets the heartbeat for both sides; a stream silent for
	// four heartbeats is dead.
	hb := w.GetHeartbeatInterval().AsDuration()
	if hb < 10*time.Millisecond || hb > time.Minute {
		hb = defaultHeartbeat
	}
	// Whatever the leader says, the lease must be renewed several times
	// per fence timeout; beating more often than the leader asked costs
	// it an echo, nothing else.
	if ag.cfg.FenceTimeout > 0 {
		hb = min(hb, max(ag.cfg.FenceTimeout/4, 10*time.Millisecond))
	}
	lastRecv.Store(time.Now().UnixNano())
	silenceNS.Store(int64(4 * hb))
	ag.renewLease(helloSent, hb)
	ag.fresh.Store(false)
	ag.leaderID.Store(w.GetLeaderId())
	ag.connected.Store(true)
	defer func() {
		ag.connected.Store(false)
		ag.leaderID.Store("")
	}()
	ag.log.Info("connected to the leader", "leader", w.GetLeaderId(), "address", addr, "held", len(held), "pending_events", len(pending), "heartbeat", hb)

	var wg sync.WaitGroup
	wg.Add(1)
	sendErr := make(chan error, 1)
	beats := &heartbeats{sent: make(map[uint64]int64)}
	go func() {
		defer wg.Done()
		sendErr <- ag.sendLoop(sctx, stream, last, hb, beats)
		cancel()
	}()
	defer wg.Wait()

	for {
		msg, err := stream.Recv()
		if err != nil {
			cancel()
			select {
			case serr := <-sendErr:
				if serr != nil && !errors.Is(serr, context.Canceled) {
					return true, serr
				}
			default:
			}
			return true, err
		}
		lastRecv.Store(time.Now().UnixNano())
		if seq := msg.GetHeartbeat().GetSeq(); seq > 0 {
			if sent, ok := beats.answered(seq); ok {
				ag.renewLease(sent, hb)
			}
		}
		ag.handle(msg)
	}
}

// heartbeats remembers when this session's numbered heartbeats were sent,
// until the leader echoes them.
type heartbeats struct {
	mu   sync.Mutex
	seq  uint64
	sent map[uint64]int64 // seq -> monoNow at sending
}

// next numbers a heartbeat about to be sent.
func (h *heartbeats) next() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.sent[h.seq] = monoNow()
	// A leader that never echoes must not grow the map without bound.
	delete(h.sent, h.seq-maxUnansweredBeats)
	return h.seq
}

// maxUnansweredBeats bounds the heartbeats remembered.
const maxUnansweredBeats = 64

// answered returns when heartbeat seq was sent and forgets it and older
// ones.
func (h *heartbeats) answered(seq uint64) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sent, ok := h.sent[seq]
	if ok {
		for s := range h.sent {
			if s <= seq {
				delete(h.sent, s)
			}
		}
	}
	return sent, ok
}

// handle acts on one message from the leader. Assignments are recorded in
// the table before the next message is read, so that when a stream ends
// the table holds everything the leader sent on it.
func (ag *Agent) handle(msg *longfairv1.LeaderMessage) {
	switch m := msg.GetMsg().(type) {
	case *longfairv1.LeaderMessage_Assignments:
		for _, asg := range m.Assignments.GetAssignments() {
			ag.assign(asg)
		}
	case *longfairv1.LeaderMessage_Kill:
		ag.kill(m.Kill.GetAttempts(), m.Kill.GetReport(), m.Kill.GetReason())
	case *longfairv1.LeaderMessage_Signal:
		ag.signal(m.Signal.GetAttempts(), int(m.Signal.GetSignal()))
	case *longfairv1.LeaderMessage_Ack:
		ag.tasks.ack(m.Ack.GetAckedSeq())
	case *longfairv1.LeaderMessage_Heartbeat:
	default:
		ag.log.Warn("ignoring an unknown message from the leader", "type", fmt.Sprintf("%T", msg.GetMsg()))
	}
}

// assign records an assignment and starts running it.
func (ag *Agent) assign(asg *longfairv1.Assignment) {
	ref := asg.GetAttempt()
	if ref.GetJobId() == 0 || ref.GetTask() < 0 || ref.GetAttempt() < 1 {
		ag.log.Error("ignoring an assignment that names no attempt", "attempt", ref)
		return
	}
	startCtx, cancel := context.WithCancel(ag.runCtx)
	a := ag.tasks.add(asg, cancel)
	if a == nil {
		cancel()
		return
	}
	ag.wg.Add(1)
	if len(asg.GetCommand()) == 0 || asg.GetWalltime().AsDuration() <= 0 {
		go func() {
			defer ag.wg.Done()
			defer cancel()
			ag.lose(a, errors.New("the assignment has no command or no walltime"))
		}()
		return
	}
	// Taken here, in the order the leader sent them, not in the
	// goroutines' order.
	var ticket *slotTicket
	if asg.GetQueued() {
		ticket = ag.slots.enqueue(asg.GetDemand())
	} else {
		ag.slots.take(asg.GetDemand())
	}
	go func() {
		defer cancel()
		ag.run(a, startCtx, ticket)
	}()
}

// sendLoop sends events as they happen, heartbeats, and a goodbye when
// the agent shuts down. after is the last seq the hello carried.
func (ag *Agent) sendLoop(ctx context.Context, stream longfairv1.Workers_ConnectClient, after uint64, heartbeat time.Duration, beats *heartbeats) error {
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	sent := after
	sendEvents := func() error {
		for {
			evs := ag.tasks.eventsAfter(sent)
			if len(evs) == 0 {
				return nil
			}
			evs = evs[:min(len(evs), maxEventsPerMessage)]
			msg := &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Events{Events: &longfairv1.WorkerEvents{Events: evs}}}
			if err := stream.Send(msg); err != nil {
				return fmt.Errorf("send events: %w", err)
			}
			sent = evs[len(evs)-1].GetSeq()
		}
	}
	// Events may have been added between the hello's snapshot and now.
	if err := sendEvents(); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ag.tasks.changed:
			if err := sendEvents(); err != nil {
				return err
			}
		case <-tick.C:
			hb := &longfairv1.Heartbeat{Seq: beats.next()}
			if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: hb}}); err != nil {
				return fmt.Errorf("send heartbeat: %w", err)
			}
		case g := <-ag.goodbyes:
			err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Goodbye{Goodbye: &longfairv1.WorkerGoodbye{Reason: g.reason}}})
			close(g.done)
			if err != nil {
				return fmt.Errorf("send goodbye: %w", err)
			}
		}
	}
}
