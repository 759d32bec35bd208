package server

import (
	"context"
	"sync"
	"time"
)

// reconcileInterval is how often a leader re-checks that every server in
// the gossip pool is in the Raft configuration, besides on gossip changes.
const reconcileInterval = 5 * time.Second

// leadershipLoop follows this server's Raft leadership: while it leads, a
// leader loop runs; when it stops leading, the loop is stopped and waited
// for before anything else happens, so leader-only work never overlaps a
// later term.
func (s *Server) leadershipLoop(ctx context.Context, notify <-chan bool) {
	var (
		stop func()
		wg   sync.WaitGroup
	)
	stopLeading := func() {
		if stop != nil {
			stop()
			wg.Wait()
			stop = nil
		}
		s.leaderReady.Store(false)
	}
	defer stopLeading()
	for {
		select {
		case <-ctx.Done():
			return
		case leading := <-notify:
			if !leading {
				s.logger.Info("lost raft leadership")
				stopLeading()
				continue
			}
			if stop != nil {
				continue
			}
			s.logger.Info("gained raft leadership")
			lctx, cancel := context.WithCancel(ctx)
			stop = cancel
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.leaderLoop(lctx)
			}()
		}
	}
}

// leaderLoop runs while this server leads. It first waits until every
// entry committed by earlier leaders is applied (a Raft barrier), which is
// what makes consistent reads on this leader current, and then keeps the
// Raft configuration in step with the servers in the gossip pool.
func (s *Server) leaderLoop(ctx context.Context) {
	for {
		err := waitFuture(ctx, s.raft.Barrier(5*time.Second))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		s.logger.Warn("leader barrier failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.leaderReady.Store(true)
	s.logger.Info("leader is current and serving")
	// The first leader creates the bootstrap token (auth_bootstrap.go).
	s.bootstrapACL(ctx)
	stopWorkers := s.startWorkerLeadership(ctx) // leader_term.go: workers and scheduling
	defer stopWorkers()

	changed := s.gossip.subscribe()
	defer s.gossip.unsubscribe(changed)
	tick := time.NewTicker(reconcileInterval)
	defer tick.Stop()
	for {
		if err := s.reconcilePeers(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("cannot add gossip servers to the raft configuration yet", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}
