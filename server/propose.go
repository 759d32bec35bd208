package server

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// defaultApplyTimeout bounds how long a proposal waits to enter the Raft
// pipeline when the caller set no deadline.
const defaultApplyTimeout = 10 * time.Second

// proposeQueued stamps cmd with the leader's clock, commits it through Raft —
// in one entry with whatever other proposals are waiting (group commit,
// propose_group.go) — and returns what the FSM answered for it. The caller
// must be on the leader (the interceptor forwards leader-only calls);
// losing leadership on the way is reported as Unavailable. queued, if not
// nil, is called once cmd waits in the leader's queue (groupCommit.commit).
func (s *Server) proposeQueued(ctx context.Context, cmd fsm.Command, queued func()) (any, error) {
	data, err := fsm.Encode(ledger.Time(time.Now().UnixNano()), cmd)
	if err != nil {
		return nil, statusError(err)
	}
	return s.proposals.commit(ctx, s, data, queued)
}

// proposeFor proposes cmd and unpacks the FSM's result as a T; a refusal
// by the FSM comes back as the error, a gRPC status with the code of its
// kind (statusError). The refusal reaches here through raft's
// ApplyFuture.Response in this process: only the status travels on.
func proposeFor[T any](ctx context.Context, s *Server, cmd fsm.Command) (T, error) {
	return proposeQueuedFor[T](ctx, s, cmd, nil)
}

// proposeQueuedFor is proposeFor through proposeQueued.
func proposeQueuedFor[T any](ctx context.Context, s *Server, cmd fsm.Command, queued func()) (T, error) {
	var zero T
	resp, err := s.proposeQueued(ctx, cmd, queued)
	if err != nil {
		return zero, err
	}
	v, err := fsm.Response[T](resp)
	if err != nil {
		err = statusError(err)
		if _, ok := status.FromError(err); !ok {
			return zero, status.Errorf(codes.Internal, "%s: %v", cmd.Type(), err)
		}
		return zero, err
	}
	return v, nil
}

// raftError turns an error from Raft (or from waiting for it) into a gRPC
// status that says what the caller should do.
func raftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return status.FromContextError(err).Err()
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return status.Error(codes.Unavailable, "this server is no longer the leader; retry and the request goes to the new one")
	case errors.Is(err, raft.ErrLeadershipLost):
		return status.Error(codes.Unavailable, "leadership changed before the write was confirmed; it may or may not have been applied: check, or retry (submissions with the same request_id are applied once)")
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return status.Error(codes.Unavailable, "the leader is too busy to accept the write in time; retry with a longer deadline")
	case errors.Is(err, raft.ErrRaftShutdown):
		return errShuttingDown
	case errors.Is(err, raft.ErrAbortedByRestore):
		return status.Error(codes.Aborted, "a snapshot restore replaced the state while the write was in flight; retry")
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Internal, "raft: %v", err)
}
