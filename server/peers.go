package server

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/core"
)

// membershipTimeout bounds one Raft configuration change.
const membershipTimeout = 10 * time.Second

// Peer is one server in the Raft configuration.
type Peer struct {
	ID       string
	RaftAddr string
	// GRPCAddr is empty when the server is not in the gossip pool.
	GRPCAddr string
	// Suffrage is voter, nonvoter or staging.
	Suffrage string
	Leader   bool
	// Alive reports whether the server is in this server's view of the
	// gossip pool.
	Alive bool
}

// Peers lists the Raft configuration as this server knows it.
func (s *Server) Peers() ([]Peer, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, raftError(err)
	}
	_, leader := s.raft.LeaderWithID()
	var out []Peer
	for _, srv := range f.Configuration().Servers {
		p := Peer{
			ID:       string(srv.ID),
			RaftAddr: string(srv.Address),
			Suffrage: suffrageName(srv.Suffrage),
			Leader:   srv.ID == leader,
		}
		if m, ok := s.gossip.Server(p.ID); ok {
			p.GRPCAddr, p.Alive = m.GRPC, true
		}
		out = append(out, p)
	}
	return out, nil
}

func suffrageName(s raft.ServerSuffrage) string {
	switch s {
	case raft.Voter:
		return "voter"
	case raft.Nonvoter:
		return "nonvoter"
	default:
		return "staging"
	}
}

// AddPeer adds a server to the Raft configuration as a voter. It must run
// on the leader. Adding a server that is already there with the same
// address changes nothing; with another address, its address is updated.
func (s *Server) AddPeer(ctx context.Context, id, raftAddr string) error {
	if err := core.CheckName("peer id", id); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if _, _, err := net.SplitHostPort(raftAddr); err != nil {
		return status.Errorf(codes.InvalidArgument, "raft address %q is not host:port: give the server's --raft-addr", raftAddr)
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raftError(err)
	}
	for _, srv := range f.Configuration().Servers {
		if string(srv.Address) == raftAddr && string(srv.ID) != id {
			return status.Errorf(codes.AlreadyExists, "raft address %s already belongs to server %s: remove that server first or check the address", raftAddr, srv.ID)
		}
		if string(srv.ID) == id && string(srv.Address) == raftAddr && srv.Suffrage == raft.Voter {
			return nil
		}
	}
	if err := waitFuture(ctx, s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, timeoutFrom(ctx, membershipTimeout))); err != nil {
		return raftError(err)
	}
	s.logger.Info("added raft peer", "node_id", id, "raft", raftAddr)
	return nil
}

// RemovePeer removes a server from the Raft configuration. It must run on
// the leader. A server that is still in the gossip pool is refused: the
// leader would add it straight back, so it has to be stopped first.
func (s *Server) RemovePeer(ctx context.Context, id string) error {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raftError(err)
	}
	found := false
	for _, srv := range f.Configuration().Servers {
		if string(srv.ID) == id {
			found = true
		}
	}
	if !found {
		return status.Errorf(codes.NotFound, "server %q is not in the raft configuration; list the peers to see their ids", id)
	}
	if _, alive := s.gossip.Server(id); alive {
		return status.Errorf(codes.FailedPrecondition, "server %q is still running (it is in the gossip pool) and would be added back: stop it first, then remove it", id)
	}
	if err := waitFuture(ctx, s.raft.RemoveServer(raft.ServerID(id), 0, timeoutFrom(ctx, membershipTimeout))); err != nil {
		return raftError(err)
	}
	s.logger.Info("removed raft peer", "node_id", id)
	return nil
}

// reconcilePeers adds every server in the gossip pool that is missing from
// the Raft configuration, and updates the address of one that came back
// on a new address. It never removes anyone: a server that stops may come
// back, and removal is an operator's decision (RemovePeer).
func (s *Server) reconcilePeers(ctx context.Context) error {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	known := make(map[raft.ServerID]raft.Server)
	for _, srv := range f.Configuration().Servers {
		known[srv.ID] = srv
	}
	for _, m := range s.gossip.Servers() {
		if m.Raft == "" {
			continue
		}
		cur, ok := known[raft.ServerID(m.ID)]
		if ok && string(cur.Address) == m.Raft {
			continue
		}
		timeout := timeoutFrom(ctx, membershipTimeout)
		var fut raft.IndexFuture
		if ok && cur.Suffrage == raft.Nonvoter {
			fut = s.raft.AddNonvoter(cur.ID, raft.ServerAddress(m.Raft), 0, timeout)
		} else {
			fut = s.raft.AddVoter(raft.ServerID(m.ID), raft.ServerAddress(m.Raft), 0, timeout)
		}
		if err := waitFuture(ctx, fut); err != nil {
			return fmt.Errorf("add server %s at %s: %w", m.ID, m.Raft, err)
		}
		if ok {
			s.logger.Info("updated raft address of server", "node_id", m.ID, "old", cur.Address, "new", m.Raft)
		} else {
			s.logger.Info("added server from gossip pool to raft configuration", "node_id", m.ID, "raft", m.Raft)
		}
	}
	return nil
}
