package server

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// eventBatch is one WorkerEvents message of one stream.
type eventBatch struct {
	c      *workerConn
	events []*longfairv1.TaskEvent
}

// maxEventsPerCommit bounds one TaskEvents command.
const maxEventsPerCommit = 10_000

// eventsLoop commits the workers' task events. Whatever arrived while the
// previous commit was in flight goes into the next one, so under load many
// events share one Raft entry. After a commit each stream is acknowledged
// up to the last event it sent; an event that is not acknowledged is sent
// again by its worker after it reconnects, and the ledger ignores what it
// has already applied.
func (t *leaderTerm) eventsLoop() {
	for {
		var batches []eventBatch
		select {
		case <-t.ctx.Done():
			return
		case b := <-t.events:
			batches = append(batches, b)
		}
		n := len(batches[0].events)
	drain:
		for n < maxEventsPerCommit {
			select {
			case b := <-t.events:
				batches = append(batches, b)
				n += len(b.events)
			default:
				break drain
			}
		}
		t.commitEvents(batches)
	}
}

func (t *leaderTerm) commitEvents(batches []eventBatch) {
	cmd := &fsm.TaskEvents{}
	acks := make(map[*workerConn]uint64)
	ended := make(map[*workerConn][]attemptKey)
	started := false
	for _, b := range batches {
		for _, e := range b.events {
			acks[b.c] = max(acks[b.c], e.GetSeq())
			ev, err := taskEventFromProto(e)
			if err != nil {
				t.log.Warn("dropping a malformed event from a worker", "node", b.c.node, "error", err)
				continue
			}
			k := attemptKey{ev.JobID, ev.Task, ev.Attempt}
			if !b.c.holds(k) {
				// Not an attempt this stream carries: stale (the ledger
				// has moved on) or about another node. Either way the
				// ledger must not hear it from this worker.
				t.log.Debug("ignoring an event about an attempt the worker does not hold", "node", b.c.node, "job", k.job, "task", k.task, "attempt", k.attempt)
				continue
			}
			if ev.Kind != fsm.TaskLost && b.c.isMember(k) {
				// A node of a parallel task that it does not head: its
				// start and end are the head's to report.
				continue
			}
			cmd.Events = append(cmd.Events, ev)
			if ev.Kind != fsm.TaskStarted {
				ended[b.c] = append(ended[b.c], k)
			} else {
				started = true
			}
		}
	}
	// A slot a task's end frees is scheduled while the end is on its way
	// through the log (fsm.ViewAfter), so that the next task's Assign goes
	// in the same entry or the one after, rather than a commit later; so
	// is the look-ahead queue room a queued task's start frees.
	var queued func()
	if len(ended) > 0 || started && t.s.cfg.LookAhead {
		queued = func() {
			t.ending.add(cmd.Events)
			kick(t.schedule)
		}
	}
	committed := len(cmd.Events) == 0 || t.commitWithRetry(cmd, queued)
	t.ending.remove(cmd.Events)
	if !committed {
		return
	}
	if len(ended) > 0 || started && t.s.cfg.LookAhead {
		// A queued attempt's start leaves room in its node's queue
		// (fsm: lookahead.go) for the next pass to fill.
		kick(t.schedule)
	}
	if len(ended) > 0 {
		// The other nodes of a parallel task that ended hold processes
		// of it: the sweep stops them (stopEndedParallel).
		t.requestSweep(false)
	}
	now := time.Now()
	for c, seq := range acks {
		c.ended(ended[c], now)
		c.enqueue(ackMessage(seq))
	}
}

// commitWithRetry commits cmd, retrying while this server leads and the
// failure is one that can pass (a busy or changing leader). It reports
// whether the events were handled: committed, or refused for good.
func (t *leaderTerm) commitWithRetry(cmd *fsm.TaskEvents, queued func()) bool {
	wait := 20 * time.Millisecond
	for {
		res, err := proposeQueuedFor[*fsm.EventsResult](t.ctx, t.s, cmd, queued)
		if err == nil {
			if len(res.Ignored) > 0 {
				t.log.Debug("the ledger ignored stale task events", "ignored", len(res.Ignored), "first_reason", res.Ignored[0].Reason)
			}
			return true
		}
		if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded && code != codes.Aborted {
			// A refusal is the same on every server: retrying cannot
			// help, and the workers must not resend it forever.
			t.log.Error("the ledger refused a batch of task events; dropping it", "events", len(cmd.Events), "error", err)
			return true
		}
		if t.ctx.Err() != nil {
			return false
		}
		t.log.Warn("cannot commit task events yet; retrying", "events", len(cmd.Events), "error", err, "retry_in", wait)
		select {
		case <-t.ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

// endingEvents are task events in flight to the log, by attempt.
type endingEvents struct {
	mu sync.Mutex
	m  map[eventKey]fsm.TaskEvent
}

// eventKey names an event in flight: an attempt's start (which
// fsm.ViewAfter reads for a queued attempt) and its end may both be.
type eventKey struct {
	attemptKey
	start bool
}

func keyOfEvent(ev fsm.TaskEvent) eventKey {
	return eventKey{attemptKey{ev.JobID, ev.Task, ev.Attempt}, ev.Kind == fsm.TaskStarted}
}

func (e *endingEvents) add(events []fsm.TaskEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range events {
		if e.m == nil {
			e.m = make(map[eventKey]fsm.TaskEvent)
		}
		e.m[keyOfEvent(ev)] = ev
	}
}

func (e *endingEvents) remove(events []fsm.TaskEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range events {
		delete(e.m, keyOfEvent(ev))
	}
}

func (e *endingEvents) list() []fsm.TaskEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]fsm.TaskEvent, 0, len(e.m))
	for _, ev := range e.m {
		out = append(out, ev)
	}
	return out
}
