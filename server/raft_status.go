package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// peerStatusWait bounds how long ListPeers with_status waits for a
// server's answer: one stopped server must not stall the page that asks.
const peerStatusWait = time.Second

// raftStatus is this server's own view of the Raft group.
func (s *Server) raftStatus() *longfairv1.RaftStatus {
	// Applied is read before commit: both only grow, so the row never
	// shows more applied than committed.
	applied := s.raft.AppliedIndex()
	st := &longfairv1.RaftStatus{
		Id:           s.cfg.NodeID,
		State:        strings.ToLower(s.raft.State().String()),
		Term:         s.raft.CurrentTerm(),
		AppliedIndex: applied,
		CommitIndex:  s.raft.CommitIndex(),
		LastLogIndex: s.raft.LastIndex(),
	}
	if s.raft.State() != raft.Leader {
		if last := s.raft.LastContact(); !last.IsZero() {
			st.SinceLastContact = durationpb.New(time.Since(last))
		}
	}
	return st
}

func (o *operatorService) GetRaftStatus(context.Context, *longfairv1.GetRaftStatusRequest) (*longfairv1.RaftStatus, error) {
	return o.s.raftStatus(), nil
}

// peerStatuses asks every peer for its Raft status at once, with the
// caller's credentials; this server answers for itself.
func (s *Server) peerStatuses(ctx context.Context, peers []*longfairv1.Peer) {
	var wg sync.WaitGroup
	for _, p := range peers {
		if p.GetId() == s.cfg.NodeID {
			p.Status = s.raftStatus()
			continue
		}
		wg.Go(func() { p.Status = s.peerStatus(ctx, p) })
	}
	wg.Wait()
}

func (s *Server) peerStatus(ctx context.Context, p *longfairv1.Peer) *longfairv1.RaftStatus {
	failed := func(why string) *longfairv1.RaftStatus { return &longfairv1.RaftStatus{Id: p.GetId(), Error: why} }
	if p.GetGrpcAddress() == "" {
		return failed("its gRPC address is not known through gossip: is it running?")
	}
	conn, err := s.fwd.conn(p.GetGrpcAddress())
	if err != nil {
		return failed(err.Error())
	}
	cctx, cancel := context.WithTimeout(ctx, peerStatusWait)
	defer cancel()
	got, err := longfairv1.NewOperatorClient(conn).GetRaftStatus(s.outgoingContext(cctx), &longfairv1.GetRaftStatusRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return failed("no answer from " + p.GetGrpcAddress() + ": " + status.Convert(err).Message())
	}
	return got
}
