package worker

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// startHold is how long a task's start waits to be sent, unless another
// event is sent first: a task that ends within it has its start and end
// reach the ledger in one Raft entry instead of two, which is most of an
// array of short tasks. The start goes with how long the task had run
// (TaskEvent.runtime), so the ledger dates it as if sent at once. Starts
// of look-ahead attempts are not held: they take their node's room, and
// free queue room for the next (slots.go).
const startHold = 50 * time.Millisecond

// attemptKey names one attempt of one task.
type attemptKey struct {
	job     uint64
	task    int64
	attempt int32
}

func keyOf(r *longfairv1.AttemptRef) attemptKey {
	return attemptKey{r.GetJobId(), r.GetTask(), r.GetAttempt()}
}

func (k attemptKey) ref() *longfairv1.AttemptRef {
	return &longfairv1.AttemptRef{JobId: k.job, Task: k.task, Attempt: k.attempt}
}

// attempt is an attempt this agent holds: from the assignment until the
// leader has acknowledged its end.
type attempt struct {
	key attemptKey
	asg *longfairv1.Assignment
	// cancelStart stops an attempt still waiting for its MIC devices.
	cancelStart context.CancelFunc
	proc        *supervised
	// cred is who the task runs as (nil: the worker's own user), for the
	// processes `longfair exec` starts in it (exec_service.go).
	cred *taskCredential
	// devices are the device indices the attempt holds (devices.go).
	devices heldDevices
	ended   bool
	// report is whether the attempt's end is reported. It is cleared when
	// the leader says the ledger does not know the attempt, and when the
	// agent shuts down (the leader then marks the node's attempts lost).
	report bool
	// stopping is set once a kill was asked for, with the grace asked
	// for (an attempt whose supervisor is still starting gets the stop
	// once it has started).
	stopping  bool
	stopGrace time.Duration
	// waiting is set while the attempt waits in the look-ahead queue
	// (slots.go).
	waiting bool
}

// table holds the attempts and the events not yet acknowledged. Every
// field is guarded by mu.
type table struct {
	mu       sync.Mutex
	attempts map[attemptKey]*attempt
	// events are the unacknowledged events in seq order.
	events []*longfairv1.TaskEvent
	seq    uint64
	// changed receives a token when an event is to be sent.
	changed chan struct{}
	// heldStarts are when the starts held back (startHold) happened, by
	// seq, until acknowledged; holding is set while a send is due for them.
	heldStarts map[uint64]time.Time
	holding    bool
	// closed is set when the agent stops taking assignments.
	closed bool
}

func newTable() *table {
	return &table{attempts: make(map[attemptKey]*attempt), changed: make(chan struct{}, 1), heldStarts: make(map[uint64]time.Time)}
}

// add records a new attempt; it returns nil when the attempt is already
// held (a duplicate delivery) or the agent no longer takes assignments.
// cancelStart is what stops the attempt while it waits to start.
func (t *table) add(asg *longfairv1.Assignment, cancelStart context.CancelFunc) *attempt {
	k := keyOf(asg.GetAttempt())
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.attempts[k]; ok || t.closed {
		return nil
	}
	a := &attempt{key: k, asg: asg, report: true, cancelStart: cancelStart, waiting: asg.GetQueued()}
	t.attempts[k] = a
	return a
}

// event appends an event about a, unless its end is not to be reported.
// It is sent at once, but for the start of an ordinary attempt, which
// waits up to startHold for another event to go with.
func (t *table) event(a *attempt, ev *longfairv1.TaskEvent) {
	t.mu.Lock()
	if !a.report {
		t.mu.Unlock()
		return
	}
	t.seq++
	ev.Seq = t.seq
	ev.Attempt = a.key.ref()
	t.events = append(t.events, ev)
	if ev.GetKind() == longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED && !a.asg.GetQueued() {
		t.heldStarts[ev.Seq] = time.Now()
		if !t.holding {
			t.holding = true
			time.AfterFunc(startHold, t.releaseStarts)
		}
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	t.signal()
}

// releaseStarts sends the starts held back, their hold being over.
func (t *table) releaseStarts() {
	t.mu.Lock()
	t.holding = false
	t.mu.Unlock()
	t.signal()
}

func (t *table) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// outgoing is evs as they are to be sent: a start held back carries how
// long its task has run by now. evs are shared with the table, so those
// are copies. t.mu is held.
func (t *table) outgoing(evs []*longfairv1.TaskEvent) []*longfairv1.TaskEvent {
	out := slices.Clone(evs)
	for i, e := range out {
		if at, ok := t.heldStarts[e.GetSeq()]; ok {
			c := proto.CloneOf(e)
			c.Runtime = durationpb.New(time.Since(at))
			out[i] = c
		}
	}
	return out
}

// ended marks a as ended. An attempt whose end is not reported is
// forgotten at once; the others when their end is acknowledged.
func (t *table) ended(a *attempt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a.ended = true
	if !a.report || !t.hasEvent(a.key) {
		delete(t.attempts, a.key)
	}
}

func (t *table) hasEvent(k attemptKey) bool {
	return slices.ContainsFunc(t.events, func(e *longfairv1.TaskEvent) bool { return keyOf(e.GetAttempt()) == k })
}

// ack forgets the events up to seq and the ended attempts they reported.
func (t *table) ack(seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for n < len(t.events) && t.events[n].GetSeq() <= seq {
		n++
	}
	done := t.events[:n]
	t.events = slices.Clone(t.events[n:])
	for _, e := range done {
		delete(t.heldStarts, e.GetSeq())
		k := keyOf(e.GetAttempt())
		if a, ok := t.attempts[k]; ok && a.ended && !t.hasEvent(k) {
			delete(t.attempts, k)
		}
	}
}

// eventsAfter returns the unacknowledged events with seq > after.
func (t *table) eventsAfter(after uint64) []*longfairv1.TaskEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, _ := slices.BinarySearchFunc(t.events, after+1, func(e *longfairv1.TaskEvent, s uint64) int {
		switch {
		case e.GetSeq() < s:
			return -1
		case e.GetSeq() > s:
			return 1
		}
		return 0
	})
	return t.outgoing(t.events[i:])
}

// snapshot is what a hello reports: every attempt held and every
// unacknowledged event, and the last seq among them.
func (t *table) snapshot() (held []*longfairv1.HeldAttempt, pending []*longfairv1.TaskEvent, last uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]attemptKey, 0, len(t.attempts))
	for k := range t.attempts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		held = append(held, &longfairv1.HeldAttempt{Attempt: k.ref(), Running: !t.attempts[k].ended})
	}
	pending = t.outgoing(t.events)
	if len(pending) > 0 {
		last = pending[len(pending)-1].GetSeq()
	}
	return held, pending, last
}

func compareKeys(a, b attemptKey) int {
	if c := cmp.Compare(a.job, b.job); c != 0 {
		return c
	}
	if c := cmp.Compare(a.task, b.task); c != 0 {
		return c
	}
	return cmp.Compare(a.attempt, b.attempt)
}

// holds reports whether the agent holds attempt k: it has not ended, or its
// end is not yet acknowledged.
func (t *table) holds(k attemptKey) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.attempts[k]
	return ok
}

// holdsJob reports whether the agent holds an attempt of job.
func (t *table) holdsJob(job uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.attempts {
		if k.job == job {
			return true
		}
	}
	return false
}

// running returns the attempts that have not ended, those still waiting
// in the look-ahead queue included.
func (t *table) running() []*attempt {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*attempt
	for _, a := range t.attempts {
		if !a.ended {
			out = append(out, a)
		}
	}
	return out
}

// counts is how many attempts have started and not ended, and how many
// wait in the look-ahead queue.
func (t *table) counts() (running, waiting int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.attempts {
		switch {
		case a.ended:
		case a.waiting:
			waiting++
		default:
			running++
		}
	}
	return running, waiting
}

// pendingEvents is how many events wait for an acknowledgement.
func (t *table) pendingEvents() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.events)
}
