package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
)

// Who may call a worker. The worker keeps no tokens and no rules of its
// own: every call to its services names a job, and the worker asks the
// servers whether the caller's bearer token may read that job, by calling
// Jobs.GetJob with that token. The servers apply their one rule (their
// auth_rules.go: admins, and members of the job's account; Jobs.GetJob and
// Workers.ReadTaskOutput share it), so a direct call to a worker is
// allowed exactly when the same read through a server would be, whether
// or not TLS is on. A server reading output for a user forwards the
// user's token. A cluster without the ACL allows every call, on servers
// and workers alike.

// authCheckTTL is how long a positive answer is reused (and how often an
// open stream asks again): a follow stream is not asked about per chunk,
// and a revoked token stops reading within this time.
const authCheckTTL = 5 * time.Second

// maxAuthCached bounds the cache of positive answers; past it the cache
// starts over. Refusals are never cached, so guesses cannot grow it.
const maxAuthCached = 4096

// authCheckTimeout bounds one question to one server.
const authCheckTimeout = 5 * time.Second

// callerAuth checks the callers of the worker's gRPC services.
type callerAuth struct {
	leaders *leaderFinder
	log     *slog.Logger

	mu      sync.Mutex
	allowed map[authKey]time.Time // until when a positive answer holds
	// tokenless is the servers' last refusal of a call without a token,
	// reused until tokenlessUntil: calls without one are then refused
	// here, without a question to the servers each.
	tokenless      error
	tokenlessUntil time.Time
}

// authKey is a token (by its hash; "" for a call without one) and a job.
type authKey struct {
	token string
	job   uint64
}

// jobScoped is a request that names the job it reads.
type jobScoped interface{ GetJobId() uint64 }

func newCallerAuth(leaders *leaderFinder, logger *slog.Logger) *callerAuth {
	return &callerAuth{leaders: leaders, log: logger, allowed: make(map[authKey]time.Time)}
}

// authorize asks the servers whether the caller of ctx may read job.
func (a *callerAuth) authorize(ctx context.Context, job uint64) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(longfairv1.AuthorizationMetadataKey)
	if len(vals) > 1 {
		return status.Error(codes.Unauthenticated, "the call carries more than one authorization header: send exactly one \"Bearer <token>\"")
	}
	key := authKey{job: job}
	out := ctx
	if len(vals) == 1 {
		key.token = ops.HashTokenSecret(vals[0])
		out = metadata.AppendToOutgoingContext(ctx, longfairv1.AuthorizationMetadataKey, vals[0])
	}
	now := time.Now()
	a.mu.Lock()
	until, ok := a.allowed[key]
	refusal := a.tokenless
	if len(vals) != 0 || !now.Before(a.tokenlessUntil) {
		refusal = nil
	}
	a.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	if refusal != nil {
		return refusal
	}
	addrs := a.leaders.candidates()
	if len(addrs) == 0 {
		return status.Error(codes.Unavailable, "this worker cannot check the caller's token: it knows no server yet; retry in a moment")
	}
	var errs []error
	for _, addr := range addrs {
		err := a.ask(out, addr, job)
		if err == nil {
			a.mu.Lock()
			if len(a.allowed) >= maxAuthCached {
				clear(a.allowed)
			}
			a.allowed[key] = now.Add(authCheckTTL)
			a.mu.Unlock()
			return nil
		}
		if st, ok := status.FromError(err); ok && st.Code() != codes.Unavailable && st.Code() != codes.DeadlineExceeded {
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			// The servers' own answer, with what to do.
			refusal := status.Errorf(st.Code(), "the servers refuse this caller for job %d: %s", job, st.Message())
			if len(vals) == 0 && st.Code() == codes.Unauthenticated {
				a.mu.Lock()
				a.tokenless, a.tokenlessUntil = status.Errorf(codes.Unauthenticated, "the servers refuse callers without a token: %s", st.Message()), now.Add(authCheckTTL)
				a.mu.Unlock()
			}
			return refusal
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return status.Errorf(codes.Unavailable, "this worker cannot check the caller's token with the servers (%v); retry when they are up", errors.Join(errs...))
}

// ask calls Jobs.GetJob on the server at addr as the caller of ctx.
func (a *callerAuth) ask(ctx context.Context, addr string, job uint64) error {
	conn, err := a.leaders.checkConn(addr)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	cctx, cancel := context.WithTimeout(ctx, authCheckTimeout)
	defer cancel()
	_, err = longfairv1.NewJobsClient(conn).GetJob(cctx, &longfairv1.GetJobRequest{JobId: job})
	return err
}

// unary checks a unary call before its handler runs.
func (a *callerAuth) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r, ok := req.(jobScoped)
	if !ok {
		return nil, status.Errorf(codes.PermissionDenied, "%s names no job, and a worker serves only what a job's readers may see", info.FullMethod)
	}
	if err := a.authorize(ctx, r.GetJobId()); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// stream checks every request of a stream before its handler sees it,
// and asks again every authCheckTTL while the stream lasts, ending it
// once the servers refuse (a revoked or expired token).
func (a *callerAuth) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == longfairv1.Allocation_Exec_FullMethodName {
		// A process of a parallel task starting another on one of its
		// nodes: the task's credential authorises it (exec_service.go).
		return handler(srv, ss)
	}
	ctx, end := context.WithCancelCause(ss.Context())
	defer end(nil)
	err := handler(srv, &checkedStream{ServerStream: ss, ctx: ctx, end: end, auth: a, method: info.FullMethod})
	if cause := context.Cause(ctx); cause != nil && ss.Context().Err() == nil {
		// watch ended the stream: the servers' refusal is the answer.
		return cause
	}
	return err
}

// checkedStream is a server stream whose requests are checked.
type checkedStream struct {
	grpc.ServerStream
	ctx     context.Context
	end     context.CancelCauseFunc
	auth    *callerAuth
	method  string
	watched bool
}

func (s *checkedStream) Context() context.Context { return s.ctx }

func (s *checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	r, ok := m.(jobScoped)
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s names no job, and a worker serves only what a job's readers may see", s.method)
	}
	if err := s.auth.authorize(s.ctx, r.GetJobId()); err != nil {
		return err
	}
	if !s.watched {
		s.watched = true
		go s.auth.watch(s.ctx, r.GetJobId(), s.end)
	}
	return nil
}

// watch asks again every authCheckTTL until ctx ends, and ends the stream
// when the servers refuse. While they cannot be reached the stream goes
// on: it was allowed, and an outage of the servers must not cut it.
func (a *callerAuth) watch(ctx context.Context, job uint64, end context.CancelCauseFunc) {
	tick := time.NewTicker(authCheckTTL)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := a.authorize(ctx, job)
		switch status.Code(err) {
		case codes.OK, codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		default:
			a.log.Info("ended a task output stream: the servers no longer allow its caller", "job", job, "error", err)
			end(err)
			return
		}
	}
}
