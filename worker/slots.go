package worker

import (
	"context"
	"slices"
	"sync"
)

// slots keeps what the attempts this agent runs hold of the node's
// resources, so that it can start the attempts of its look-ahead queue
// (Assignment.queued; package fsm: lookahead.go) the moment one ends,
// without waiting for the leader. An attempt the leader placed on the
// node's free resources takes its demand at once: the ledger found room
// for it. A queued one waits, in the order the leader sent them, until
// what runs leaves room for its demand within the node's resources;
// the head of the queue goes first, and nothing passes it.
//
// The ledger keeps the room a queued attempt will take from being given to
// anyone else, and the agent reports an attempt's end before the start of
// the queued one that takes its place, so the ledger and the agent agree
// on what runs here.
type slots struct {
	mu sync.Mutex
	// capacity is the node's resources by name; a resource it does not
	// name is not bounded here.
	capacity map[string]float64
	used     map[string]float64
	queue    []*slotTicket
}

// slotTicket is a queued attempt's place in the queue; ready is closed
// when it may start.
type slotTicket struct {
	demand map[string]float64
	ready  chan struct{}
}

func newSlots(capacity map[string]float64) *slots {
	return &slots{capacity: capacity, used: make(map[string]float64)}
}

// take holds demand for an attempt the leader placed on free resources.
func (s *slots) take(demand map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(demand, +1)
}

// enqueue puts a queued attempt's demand at the back of the queue; it
// holds the demand once its ticket is ready.
func (s *slots) enqueue(demand map[string]float64) *slotTicket {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &slotTicket{demand: demand, ready: make(chan struct{})}
	s.queue = append(s.queue, t)
	s.admit()
	return t
}

// wait blocks until t may start and reports true, or leaves the queue
// and reports false when ctx ends first (the attempt was stopped).
func (s *slots) wait(ctx context.Context, t *slotTicket) bool {
	if ctx.Err() == nil { // a stop asked for before wins over room
		select {
		case <-t.ready:
			return true
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.queue, t); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
		s.admit() // the head may have changed
		return false
	}
	// Admitted meanwhile: give the room back.
	s.add(t.demand, -1)
	s.admit()
	return false
}

// give returns what an attempt held and starts the queued attempts that
// now fit, head first.
func (s *slots) give(demand map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(demand, -1)
	s.admit()
}

// admit readies queued tickets from the head while each fits. A head
// that would not fit even an idle node (its resources as the ledger knows
// them differ from what this agent was started with) starts once nothing
// else runs, rather than block the queue for good.
func (s *slots) admit() {
	for len(s.queue) > 0 && (s.fits(s.queue[0].demand) || s.idle()) {
		t := s.queue[0]
		s.queue = s.queue[1:]
		s.add(t.demand, +1)
		close(t.ready)
	}
}

func (s *slots) fits(demand map[string]float64) bool {
	for name, q := range demand {
		if c, ok := s.capacity[name]; ok && s.used[name]+q > c+1e-9 {
			return false
		}
	}
	return true
}

func (s *slots) idle() bool {
	for _, q := range s.used {
		if q > 1e-9 {
			return false
		}
	}
	return true
}

func (s *slots) add(demand map[string]float64, sign float64) {
	for name, q := range demand {
		s.used[name] += sign * q
	}
}
