package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// The internals that this package's black-box tests (package server_test,
// which run their clusters from internal/testcluster) check or steer.
// Nothing here is part of the server's API.

// Timings and limits the tests derive their expectations from.
const (
	RoleWorker           = roleWorker
	HelloTimeout         = helloTimeout
	TokenRecheckInterval = tokenRecheckInterval
	WorkerStreamGrace    = workerStreamGrace
	WorkerSilence        = silentBeats * workerHeartbeat // of a worker that does not say its fence timeout
	FenceMargin          = fenceMargin
	GroupsInFlight       = groupsInFlight
	MemberMetaVersion    = memberMetaVersion
)

// AttemptKey names one attempt of a task, as the leader keys the
// attempts it delivers.
type AttemptKey = attemptKey

// Key is the key of attempt of task of job.
func Key(job uint64, task int64, attempt int) AttemptKey { return attemptKey{job, task, attempt} }

// KeyOfRef is the key of an attempt reference on the wire.
func KeyOfRef(r *longfairv1.AttemptRef) AttemptKey { return keyOfRef(r) }

// Ref is k as an attempt reference on the wire.
func (k attemptKey) Ref() *longfairv1.AttemptRef { return k.ref() }

// Job is k's job id.
func (k attemptKey) Job() uint64 { return k.job }

// Task is k's task index.
func (k attemptKey) Task() int64 { return k.task }

// Attempt is k's attempt number.
func (k attemptKey) Attempt() int { return k.attempt }

// ProposeFor proposes cmd through s as its gRPC services do.
func ProposeFor[T any](ctx context.Context, s *Server, cmd fsm.Command) (T, error) {
	return proposeFor[T](ctx, s, cmd)
}

// Raft is s's raft node.
func (s *Server) Raft() *raft.Raft { return s.raft }

// LogStore is s's raft log.
func (s *Server) LogStore() raft.LogStore { return s.stores.logs }

// Config is the configuration s runs with.
func (s *Server) Config() Config { return s.cfg }

// GRPCServer is s's gRPC server, whose services the tests enumerate.
func (s *Server) GRPCServer() *grpc.Server { return s.grpc }

// Secured reports whether s serves TLS, and whether it asks callers for a
// certificate.
func (s *Server) Secured() (tls, verifiesIncoming bool) {
	return s.sec.tls, s.sec.verifiesIncoming
}

// WorkerStream is the stream s, leading, holds of the worker of node, as
// a value to compare (the same stream or another), or nil when it holds
// none.
func (s *Server) WorkerStream(node string) any {
	term := s.hub.current()
	if term == nil {
		return nil
	}
	if c := term.conn(node); c != nil {
		return c
	}
	return nil
}

// HoldFlushers takes n of the group commit's flusher slots (n < 0 gives
// them back), as a busy leader's are taken.
func (s *Server) HoldFlushers(n int) {
	g := &s.proposals
	g.mu.Lock()
	g.flushers += n
	g.mu.Unlock()
}

// GroupCommitLoad is how many proposals wait and how many flushers run.
func (s *Server) GroupCommitLoad() (queued, flushers int) {
	g := &s.proposals
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue), g.flushers
}

// JoinGossipAs starts a gossip member as a server with cfg would, tries
// to join the pool at addrs, and leaves: it returns how many members it
// contacted and the join's error (err is the start's).
func JoinGossipAs(cfg Config, self MemberMeta, logger *slog.Logger, addrs []string) (contacted int, joinErr, err error) {
	g, err := startGossip(cfg, self, logger)
	if err != nil {
		return 0, nil, err
	}
	defer g.leave(time.Second)
	contacted, joinErr = g.join(addrs)
	return contacted, joinErr, nil
}

// APIPrefix starts the full name of every public method.
const APIPrefix = apiPrefix

// OnlyWorkersCall reports whether only workers may call the method
// (their stream to the leader), by its full name.
func OnlyWorkersCall(fullMethod string) bool {
	rule, _ := ruleOf(fullMethod)
	return rule.access == accessWorker
}
