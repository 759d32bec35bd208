package server

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// operatorService implements longfairv1.OperatorServer.
type operatorService struct {
	longfairv1.UnimplementedOperatorServer
	s *Server
}

func (o *operatorService) ListPeers(ctx context.Context, req *longfairv1.ListPeersRequest) (*longfairv1.ListPeersResponse, error) {
	out, err := o.peers()
	if err == nil && req.GetWithStatus() {
		o.s.peerStatuses(ctx, out.Peers)
	}
	return out, err
}

func (o *operatorService) peers() (*longfairv1.ListPeersResponse, error) {
	peers, err := o.s.Peers()
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListPeersResponse{}
	for _, p := range peers {
		out.Peers = append(out.Peers, peerProto(p))
	}
	return out, nil
}

func peerProto(p Peer) *longfairv1.Peer {
	return &longfairv1.Peer{Id: p.ID, RaftAddress: p.RaftAddr, GrpcAddress: p.GRPCAddr, Suffrage: p.Suffrage, Leader: p.Leader}
}

func (o *operatorService) GetLeader(ctx context.Context, _ *longfairv1.GetLeaderRequest) (*longfairv1.Peer, error) {
	id, addr, err := o.s.leaderGRPC()
	if err != nil && id == "" {
		return nil, err
	}
	peers, perr := o.s.Peers()
	if perr != nil {
		return nil, perr
	}
	for _, p := range peers {
		if p.ID == id {
			return peerProto(p), nil
		}
	}
	raftAddr, _ := o.s.raft.LeaderWithID()
	return &longfairv1.Peer{Id: id, RaftAddress: string(raftAddr), GrpcAddress: addr, Leader: true, Suffrage: "voter"}, nil
}

func (o *operatorService) VerifyState(ctx context.Context, _ *longfairv1.VerifyStateRequest) (*longfairv1.VerifyStateResponse, error) {
	return o.s.VerifyState(ctx)
}

func (o *operatorService) GetStateDigest(ctx context.Context, req *longfairv1.GetStateDigestRequest) (*longfairv1.ServerStateDigest, error) {
	return o.s.getStateDigest(ctx, req.GetIndex())
}

func (o *operatorService) AddPeer(ctx context.Context, req *longfairv1.AddPeerRequest) (*longfairv1.ListPeersResponse, error) {
	if err := o.s.AddPeer(ctx, req.GetId(), req.GetRaftAddress()); err != nil {
		return nil, err
	}
	return o.peers()
}

func (o *operatorService) RemovePeer(ctx context.Context, req *longfairv1.RemovePeerRequest) (*longfairv1.ListPeersResponse, error) {
	if req.GetId() == "" {
		return nil, status.Error(codes.InvalidArgument, "id is empty: give the node id of the server to remove")
	}
	if err := o.s.RemovePeer(ctx, req.GetId()); err != nil {
		return nil, err
	}
	return o.peers()
}

func (o *operatorService) SaveSnapshot(_ *longfairv1.SaveSnapshotRequest, stream grpc.ServerStreamingServer[longfairv1.SnapshotChunk]) error {
	_, err := o.s.SaveSnapshot(stream.Context(), &chunkWriter{send: stream.Send})
	return err
}

func (o *operatorService) RestoreSnapshot(stream grpc.ClientStreamingServer[longfairv1.SnapshotChunk, longfairv1.RestoreSnapshotResponse]) error {
	idx, err := o.s.RestoreSnapshot(stream.Context(), &chunkReader{recv: stream.Recv})
	if err != nil {
		return err
	}
	return stream.SendAndClose(&longfairv1.RestoreSnapshotResponse{Index: idx})
}

// chunkWriter sends what is written to it as SnapshotChunk messages no
// bigger than snapshotChunkSize, well under gRPC's message size limit.
type chunkWriter struct {
	send func(*longfairv1.SnapshotChunk) error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), snapshotChunkSize)
		if err := w.send(&longfairv1.SnapshotChunk{Data: append([]byte(nil), p[:k]...)}); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

// chunkReader reads the data of a stream of SnapshotChunk messages.
type chunkReader struct {
	recv func() (*longfairv1.SnapshotChunk, error)
	buf  []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		c, err := r.recv()
		if errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
		r.buf = c.GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}
