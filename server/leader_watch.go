package server

import (
	"context"
	"sync"

	"github.com/hashicorp/raft"
)

// leaderWatch tells waiters that Raft's view of the leader changed on this
// server: a follower that forwards a call to a leader which stopped
// answering gives up on it when the followers elect another (or start an
// election), instead of waiting for its deadline (forward.go).
type leaderWatch struct {
	mu sync.Mutex
	ch chan struct{}
}

// changed returns a channel closed at the next change of leader.
func (w *leaderWatch) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *leaderWatch) bump() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// watchLeaderLoop feeds Raft's leader observations to s.leaders until ctx
// ends.
func (s *Server) watchLeaderLoop(ctx context.Context) {
	obs := make(chan raft.Observation, 16)
	o := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	s.raft.RegisterObserver(o)
	defer s.raft.DeregisterObserver(o)
	for {
		select {
		case <-ctx.Done():
			return
		case <-obs:
			s.leaders.bump()
		}
	}
}
