package worker

import (
	"context"
	"testing"
	"time"
)

// Queued attempts start in the order they came, each once what runs
// leaves room for it, and nothing passes the head; one stopped while it
// waits leaves the queue, and the ones behind it move up.
func TestSlotsStartQueuedAttemptsInOrderWithinCapacity(t *testing.T) {
	s := newSlots(map[string]float64{"cpu": 4, "mem": 8})
	ready := func(tk *slotTicket) bool {
		select {
		case <-tk.ready:
			return true
		default:
			return false
		}
	}
	s.take(map[string]float64{"cpu": 3})
	big := s.enqueue(map[string]float64{"cpu": 2})
	small := s.enqueue(map[string]float64{"cpu": 1})
	last := s.enqueue(map[string]float64{"cpu": 1, "gpu": 5}) // gpu: not a resource here, not bounded
	if ready(big) || ready(small) {
		t.Fatal("a queued attempt was let start with 1 cpu free: the head needs 2, and nothing passes it")
	}
	s.give(map[string]float64{"cpu": 1}) // 2 free
	if !ready(big) || ready(small) {
		t.Fatalf("with 2 cpu free: head ready %v, next ready %v; want the head alone", ready(big), ready(small))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s.wait(ctx, small) {
		t.Fatal("a stopped attempt was let start")
	}
	s.give(map[string]float64{"cpu": 2}) // the head ends: 2 free, small gone
	if !ready(last) {
		t.Fatal("the attempt behind a stopped one did not move up")
	}
	if !s.wait(context.Background(), last) {
		t.Fatal("a ready ticket did not start")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := s.used["cpu"]; got != 3 {
		t.Fatalf("%v cpu in use, want 3: 2 held before, 1 for the last", got)
	}
}

// A queued attempt bigger than the node as this agent knows it starts
// once nothing else runs, instead of holding up the queue for good.
func TestSlotsOversizedHeadStartsOnAnIdleNode(t *testing.T) {
	s := newSlots(map[string]float64{"cpu": 2})
	s.take(map[string]float64{"cpu": 1})
	big := s.enqueue(map[string]float64{"cpu": 4})
	select {
	case <-big.ready:
		t.Fatal("an oversized attempt started beside a running one")
	default:
	}
	s.give(map[string]float64{"cpu": 1})
	select {
	case <-big.ready:
	default:
		t.Fatal("an oversized attempt at the head of the queue did not start on an idle node")
	}
}

// A ticket made ready while its attempt was being stopped gives its room
// back, so the next one can start.
func TestSlotsStoppedReadyTicketGivesItsRoomBack(t *testing.T) {
	s := newSlots(map[string]float64{"cpu": 1})
	first := s.enqueue(map[string]float64{"cpu": 1})
	second := s.enqueue(map[string]float64{"cpu": 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	<-first.ready
	if s.wait(ctx, first) {
		t.Fatal("an attempt stopped before it started was let start")
	}
	select {
	case <-second.ready:
	case <-time.After(time.Second):
		t.Fatal("the room of a ticket stopped after it was ready was not given back")
	}
}
