package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// The state check (etcd's corruption check, fsm/integrity.go): the leader
// commits a checkpoint, every replica digests its state at that index off
// the apply path, the leader asks every server for its digest, and commits
// the one most servers hold for every replica to compare with its own. A
// replica that differs stops serving reads and says why (route, Ready,
// /metrics). A damaged leader is so found by its followers' agreeing with
// each other: it marks itself and hands leadership over. GetStateDigest
// needs no token (auth_rules.go), so the leader asks the others with the
// ACL on too: were it to commit its own digest unasked, a damaged leader
// would mark every healthy follower instead of itself.

// stateCheckTimeout bounds one check round: two commits and a digest.
const stateCheckTimeout = time.Minute

// How long a round waits for one server's digest: reaching it, and its
// applying the checkpoint and digesting its state. The periodic round
// waits less, so that a server that is down does not hold up the others'
// comparison for long; verify-state waits up to most of its caller's
// deadline.
const (
	peerDigestWait       = 5 * time.Second
	verifyPeerDigestWait = 30 * time.Second
)

// stateCheckLoop runs check rounds on the leader: every
// state_check.interval while anything was written, or sooner once
// state_check.entries entries were applied since the last checkpoint. A
// quiet group writes no checkpoints: its state does not change. (A server
// restarted on a file changed while it was stopped finds out itself, from
// the digest it recorded at shutdown; after a crash, the next round finds
// it.)
func (s *Server) stateCheckLoop(ctx context.Context) {
	every, entries := time.Duration(s.cfg.StateCheck.Interval), s.cfg.StateCheck.Entries
	if every <= 0 && entries == 0 {
		return
	}
	tick := time.Second
	if every > 0 && every < tick {
		tick = every
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.Leading() {
			continue
		}
		if s.fsm.Diverged() != nil {
			s.stepDownDiverged()
			continue
		}
		applied := s.raft.AppliedIndex()
		if applied <= s.lastCheck.Load() {
			// Nothing was written since the last round compared.
			continue
		}
		due := every > 0 && time.Since(last) >= every
		due = due || entries > 0 && applied >= s.fsm.LatestCheckpoint()+entries
		if !due {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, stateCheckTimeout)
		// The leader asks the other servers for their digests, and so
		// finds out when it is the damaged one.
		resp, err := s.checkState(cctx, true, peerDigestWait)
		cancel()
		last = time.Now()
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("state check round failed; the next round retries", "error", err)
			continue
		}
		s.logger.Debug("state check round committed", "checkpoint", resp.GetIndex(), "majority", resp.GetMajorityDigest())
	}
}

// checkState runs one round on the leader: a checkpoint, the leader's
// digest of it and, when ask is set, every server's; then the entry that
// has every replica compare its digest with the one most servers hold (the
// leader's own when no digest has a majority or nobody was asked). A
// damaged leader thus marks itself, not its followers, and steps down.
func (s *Server) checkState(ctx context.Context, ask bool, wait time.Duration) (*longfairv1.VerifyStateResponse, error) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	index, err := s.proposeCheckpoint(ctx, &fsm.Checkpoint{})
	if err != nil {
		return nil, err
	}
	own, err := s.fsm.CheckpointDigest(ctx, index)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "digest the leader's state at checkpoint %d: %v", index, err)
	}
	resp := &longfairv1.VerifyStateResponse{Index: index}
	if ask {
		resp.Servers = s.collectDigests(ctx, index, wait)
		judge(resp)
	}
	compare := own
	if resp.MajorityDigest != "" {
		compare, _ = fsm.ParseDigest(resp.MajorityDigest)
	}
	if _, err := s.proposeCheckpoint(ctx, &fsm.Checkpoint{CompareIndex: index, Digest: hex.EncodeToString(compare[:])}); err != nil {
		return nil, err
	}
	if compare != own {
		// Applying that entry marked this server diverged.
		s.stepDownDiverged()
	}
	return resp, nil
}

// proposeCheckpoint commits cmd in an entry of its own (the FSM refuses
// checkpoints grouped with other commands) and returns its index.
func (s *Server) proposeCheckpoint(ctx context.Context, cmd *fsm.Checkpoint) (uint64, error) {
	data, err := fsm.Encode(ledger.Time(time.Now().UnixNano()), cmd)
	if err != nil {
		return 0, statusError(err)
	}
	f := s.raft.Apply(data, timeoutFrom(ctx, defaultApplyTimeout))
	if err := waitFuture(ctx, f); err != nil {
		return 0, raftError(err)
	}
	info, err := fsm.Response[fsm.CheckpointInfo](f.Response())
	if err != nil {
		return 0, statusError(err)
	}
	s.lastCheck.Store(f.Index())
	return info.Index, nil
}

// divergedStatus is the refusal of a server whose state diverged. It is
// Unavailable, so that a client given several servers moves on to another.
func divergedStatus(d *fsm.Divergence) error {
	return status.Error(codes.Unavailable, d.Error())
}

// collectDigests asks every server in the configuration for its digest at
// checkpoint index, with the caller's credentials.
func (s *Server) collectDigests(ctx context.Context, index uint64, wait time.Duration) []*longfairv1.ServerStateDigest {
	peers, err := s.Peers()
	if err != nil {
		return []*longfairv1.ServerStateDigest{s.localDigest(ctx, index)}
	}
	rows := make([]*longfairv1.ServerStateDigest, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = s.peerDigest(ctx, p, index, wait)
		}()
	}
	wg.Wait()
	return rows
}

// judge finds the digest more than half of the servers hold and says of
// each server whether it agrees.
func judge(resp *longfairv1.VerifyStateResponse) {
	counts := map[string]int{}
	for _, r := range resp.Servers {
		if r.GetDigest() != "" {
			counts[r.GetDigest()]++
		}
	}
	for d, n := range counts {
		if 2*n > len(resp.Servers) {
			resp.MajorityDigest = d
		}
	}
	for _, r := range resp.Servers {
		switch {
		case r.GetDigest() == "":
			r.Status = "UNKNOWN"
		case resp.MajorityDigest == "":
			r.Status = "UNKNOWN"
			r.Detail = "no digest is held by more than half of the servers: compare the servers' data by hand before restoring any"
		case r.GetDigest() == resp.MajorityDigest:
			r.Status = "OK"
		default:
			r.Status = "DIVERGED"
			r.Detail = fmt.Sprintf("its state differs from most servers' at index %d: restore it: %s", resp.Index, fsm.DamagedStateRemedy)
		}
	}
}

// VerifyState is the operator's check, on the leader: a round in which
// every server is asked for its digest, with the caller's credentials.
func (s *Server) VerifyState(ctx context.Context) (*longfairv1.VerifyStateResponse, error) {
	// Leave a fifth of the caller's time to answer with what came back.
	wait := min(verifyPeerDigestWait, timeoutFrom(ctx, verifyPeerDigestWait)*4/5)
	return s.checkState(ctx, true, wait)
}

// stepDownDiverged hands leadership over, once, when this leader's state
// diverged: its answers would come from damaged state.
func (s *Server) stepDownDiverged() {
	if !s.IsLeader() || !s.steppingDown.CompareAndSwap(false, true) {
		return
	}
	s.logger.Error("this leader's state diverged from most servers'; handing leadership over")
	go func() {
		defer s.steppingDown.Store(false)
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			s.logger.Error("could not hand leadership over; stop this server and restore it", "error", err)
		}
	}()
}

// peerDigest asks server p for its digest at checkpoint index, with the
// caller's credentials; this server answers for itself.
func (s *Server) peerDigest(ctx context.Context, p Peer, index uint64, wait time.Duration) *longfairv1.ServerStateDigest {
	if p.ID == s.cfg.NodeID {
		return s.localDigest(ctx, index)
	}
	row := &longfairv1.ServerStateDigest{Id: p.ID, Index: index}
	if p.GRPCAddr == "" {
		row.Detail = "its gRPC address is not known through gossip: is it running?"
		return row
	}
	conn, err := s.fwd.conn(p.GRPCAddr)
	if err != nil {
		row.Detail = err.Error()
		return row
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// A server that was down a moment ago is reconnected to, not given up
	// on at once because of its connection's last failure.
	got, err := longfairv1.NewOperatorClient(conn).GetStateDigest(s.outgoingContext(cctx), &longfairv1.GetStateDigestRequest{Index: index}, grpc.WaitForReady(true))
	if err != nil {
		row.Detail = fmt.Sprintf("no answer from %s: %v", p.GRPCAddr, status.Convert(err).Message())
		return row
	}
	got.Id = p.ID
	return got
}

// localDigest is this server's digest at checkpoint index, waiting for it.
func (s *Server) localDigest(ctx context.Context, index uint64) *longfairv1.ServerStateDigest {
	row := &longfairv1.ServerStateDigest{Id: s.cfg.NodeID, Index: index}
	if d := s.fsm.Diverged(); d != nil {
		row.Diverged = d.Error()
	}
	d, err := s.fsm.CheckpointDigest(ctx, index)
	if err != nil {
		row.Detail = err.Error()
		return row
	}
	row.Digest = hex.EncodeToString(d[:])
	return row
}

// getStateDigest serves GetStateDigest.
func (s *Server) getStateDigest(ctx context.Context, index uint64) (*longfairv1.ServerStateDigest, error) {
	if index == 0 {
		return nil, status.Error(codes.InvalidArgument, "index is 0: give the index of a checkpoint (verify-state reports it)")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	row := s.localDigest(ctx, index)
	if row.Digest == "" && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, status.Errorf(codes.DeadlineExceeded, "this server has not digested checkpoint %d in time: it may be far behind the leader", index)
	}
	return row, nil
}
