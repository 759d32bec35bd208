package worker

import (
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// signalled reports whether the table asked for a send, taking the token.
func signalled(tb *table) bool {
	select {
	case <-tb.changed:
		return true
	default:
		return false
	}
}

// An ordinary task's start waits up to startHold to go with the next
// event, its end above all, so that the two reach the ledger in one
// entry; it then carries how long the task had run, for the ledger to
// date it. A look-ahead attempt's start is sent at once.
func TestStartIsHeldToGoWithTheEnd(t *testing.T) {
	tb := newTable()
	short := tb.add(asg(1, 0, 1, "true", time.Minute, nil), func() {})
	long := tb.add(asg(1, 1, 1, "sleep 9", time.Minute, nil), func() {})
	q := asg(1, 2, 1, "true", time.Minute, nil)
	q.Queued = true
	queued := tb.add(q, func() {})

	before := time.Now()
	tb.event(short, &longfairv1.TaskEvent{Kind: started})
	if signalled(tb) && time.Since(before) < startHold {
		t.Fatal("an ordinary start was sent at once, not held to go with the task's end")
	}
	time.Sleep(20 * time.Millisecond)
	tb.event(short, &longfairv1.TaskEvent{Kind: exited})
	if !signalled(tb) {
		t.Fatal("a task's end did not ask for a send")
	}
	evs := tb.eventsAfter(0)
	if len(evs) != 2 || evs[0].GetKind() != started || evs[1].GetKind() != exited {
		t.Fatalf("events to send: %v, want the start and the end together", evs)
	}
	if ran := evs[0].GetRuntime().AsDuration(); ran < 20*time.Millisecond || ran > time.Since(before) {
		t.Fatalf("the held start says the task had run %v; it ran at least 20ms and at most %v", ran, time.Since(before))
	}
	tb.ack(evs[1].GetSeq())
	if len(tb.heldStarts) != 0 {
		t.Fatalf("acknowledged starts are still kept: %v", tb.heldStarts)
	}

	// A start with nothing to go with is sent once its hold is over.
	// (Starts held at once share one hold: wait for the first's to end.)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		tb.mu.Lock()
		holding := tb.holding
		tb.mu.Unlock()
		if !holding {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first start's hold never ended")
		}
	}
	signalled(tb)
	before = time.Now()
	tb.event(long, &longfairv1.TaskEvent{Kind: started})
	select {
	case <-tb.changed:
		if waited := time.Since(before); waited < startHold {
			t.Fatalf("a lone start was sent after %v, before its hold of %v was over", waited, startHold)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lone start was never sent")
	}

	tb.event(queued, &longfairv1.TaskEvent{Kind: started})
	if !signalled(tb) {
		t.Fatal("a look-ahead attempt's start was held: it takes its node's room and must be sent at once")
	}
	if evs := tb.eventsAfter(evs[1].GetSeq()); len(evs) != 2 || evs[1].GetRuntime() != nil {
		t.Fatalf("events after the first two: %v, want two starts, the look-ahead one without a runtime", evs)
	}
}

// A start still held when the worker says hello to a new leader goes in
// the hello with how long its task has run, as a send would carry it.
func TestHelloCarriesAHeldStartsRuntime(t *testing.T) {
	tb := newTable()
	a := tb.add(asg(1, 0, 1, "sleep 9", time.Minute, nil), func() {})
	before := time.Now()
	tb.event(a, &longfairv1.TaskEvent{Kind: started})
	time.Sleep(10 * time.Millisecond)
	_, pending, last := tb.snapshot()
	if len(pending) != 1 || last != pending[0].GetSeq() {
		t.Fatalf("the hello carries %v (last %d), want the held start", pending, last)
	}
	if ran := pending[0].GetRuntime().AsDuration(); ran < 10*time.Millisecond || ran > time.Since(before) {
		t.Fatalf("the held start in the hello says its task ran %v; it ran at least 10ms and at most %v", ran, time.Since(before))
	}
	if tb.events[0].GetRuntime() != nil {
		t.Fatal("the table's own copy was given a runtime: each send must measure it afresh")
	}
}
