package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// bootstrapLoop forms a new group once BootstrapExpect servers without
// Raft state see each other in the gossip pool, as Consul and Nomad do.
// The server with the lowest node id bootstraps a configuration holding
// every such server; the others are in that configuration and simply wait
// for the first leader's AppendEntries. A server that sees a peer that
// already has Raft state never bootstraps: that group's leader adds it.
func (s *Server) bootstrapLoop(ctx context.Context) {
	changed := s.gossip.subscribe()
	defer s.gossip.unsubscribe(changed)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var lastWait string
	for {
		done, wait, err := s.tryBootstrap()
		switch {
		case err != nil:
			s.logger.Error("bootstrap failed; retrying", "error", err)
		case done:
			return
		case wait != lastWait:
			s.logger.Info("waiting to bootstrap", "reason", wait)
			lastWait = wait
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// tryBootstrap makes one bootstrap decision. It reports done once this
// server is (or is about to be) part of a group, and otherwise why it
// waits.
func (s *Server) tryBootstrap() (done bool, wait string, err error) {
	if s.raft.LastIndex() > 0 {
		// A leader added us, or our own bootstrap landed.
		s.gossip.setHasState()
		return true, "", nil
	}
	expect := s.cfg.BootstrapExpect
	servers := s.gossip.Servers()
	for _, m := range servers {
		if m.ID == s.cfg.NodeID {
			continue
		}
		if m.HasState {
			s.logger.Info("found a server that belongs to a group; waiting for its leader to add this server", "node_id", m.ID)
			return true, "", nil
		}
		if m.Expect != expect {
			return false, fmt.Sprintf("server %s was started with bootstrap-expect %d, this one with %d: restart them with the same value", m.ID, m.Expect, expect), nil
		}
	}
	if len(servers) < expect {
		return false, fmt.Sprintf("%d of %d servers are in the gossip pool", len(servers), expect), nil
	}
	if servers[0].ID != s.cfg.NodeID {
		return false, fmt.Sprintf("%d servers present; server %s (lowest node id) bootstraps the group", len(servers), servers[0].ID), nil
	}
	conf := raft.Configuration{}
	for _, m := range servers {
		conf.Servers = append(conf.Servers, raft.Server{
			Suffrage: raft.Voter,
			ID:       raft.ServerID(m.ID),
			Address:  raft.ServerAddress(m.Raft),
		})
	}
	if err := s.raft.BootstrapCluster(conf).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return false, "", fmt.Errorf("bootstrap raft with %d servers: %w", len(servers), err)
	}
	s.logger.Info("bootstrapped the server group", "servers", len(servers))
	s.gossip.setHasState()
	return true, "", nil
}
