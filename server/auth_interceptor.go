package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// The auth interceptors run first on every call, before the request is
// validated or routed: a call without a usable token is refused
// (Unauthenticated) where it arrives and changes nothing; a call its token
// does not allow is refused with PermissionDenied. A forwarded call
// carries the caller's token, and the leader checks it again.

// authorize decides a call made with identity id: the role must fit the
// method, and a user's request must lie within its accounts. It returns
// the scope to filter the answer with (nil: nothing to filter).
func (s *Server) authorize(id Identity, rule methodRule, fullMethod string, req any) (*userScope, error) {
	switch {
	case id.Role == fsm.RoleAdmin, rule.access == accessAny:
		return nil, nil
	case rule.access == accessWorker && id.Role == fsm.RoleWorker:
		return nil, nil
	case rule.access == accessUser && id.Role == fsm.RoleUser:
		u, err := s.userScope(id)
		if err != nil {
			return nil, err
		}
		if rule.check != nil && req != nil {
			if err := rule.check(u, req); err != nil {
				return nil, err
			}
		}
		return u, nil
	}
	return nil, status.Errorf(codes.PermissionDenied, "a %s token may not call %s: %s", id.Role, fullMethod, roleHint(id.Role, rule.access))
}

func roleHint(role fsm.TokenRole, a access) string {
	switch {
	case role == fsm.RoleWorker:
		return "a worker token only holds a worker's stream to the leader; use a user or admin token"
	case a == accessWorker:
		return "only workers (and admins) hold worker streams; run 'longfair worker' with a worker token"
	}
	return "ask an admin to do it, or for an admin token"
}

// userScope reads the memberships of a user token's user.
func (s *Server) userScope(id Identity) (*userScope, error) {
	u, err := s.fsm.User(id.User)
	if err != nil {
		return nil, status.Errorf(codes.PermissionDenied, "token %s acts as user %q, who does not exist: ask an admin for a token of an existing user", id.TokenID, id.User)
	}
	return &userScope{user: u.Name, accounts: u.Accounts, fsm: s.fsm}, nil
}

// identify authenticates the call in ctx. When this server does not know
// the token and is a follower, it returns the leader's address instead:
// the token may have been created a moment ago and not be applied here
// yet, so the leader, which applied it, decides.
func (s *Server) identify(ctx context.Context) (Identity, string, error) {
	if carriesMunge(ctx) && !s.IsLeader() && forwardedBy(ctx) == "" {
		// Only the leader decodes a credential (auth_munge.go).
		_, addr, err := s.leaderGRPC()
		if err != nil {
			return Identity{}, "", err
		}
		if addr != s.GRPCAddr() {
			return Identity{}, addr, nil
		}
	}
	id, err := s.auth.authenticate(ctx, time.Now())
	if !errors.Is(err, errUnknownToken) || s.IsLeader() || forwardedBy(ctx) != "" {
		return id, "", err
	}
	if _, addr, lerr := s.leaderGRPC(); lerr == nil && addr != s.GRPCAddr() {
		return Identity{}, addr, nil
	}
	return Identity{}, "", err
}

// workerStreamMethod is the full name of the workers' stream.
const workerStreamMethod = apiPrefix + "Workers/Connect"

// authUnary is the unary auth interceptor.
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	rule, _ := ruleOf(info.FullMethod)
	if !s.cfg.ACL.Enabled || rule.access == accessOpen {
		return handler(ctx, req)
	}
	id, leader, err := s.identify(ctx)
	if err != nil {
		return nil, err
	}
	if leader != "" {
		// No local handler: the token was not checked here, so a call
		// this server would have to serve after leadership moved to it
		// is answered "retry" instead (forwardUnary).
		return s.forwardUnary(ctx, leader, info.FullMethod, req, nil)
	}
	scope, err := s.authorize(id, rule, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	resp, err := handler(withIdentity(ctx, id), req)
	if err == nil && scope != nil && rule.filter != nil {
		rule.filter(scope, resp)
	}
	return resp, err
}

// authStream is the stream auth interceptor. The role is checked when the
// stream opens; a user's request is checked when its first message
// arrives, before the handler sees it.
func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	rule, _ := ruleOf(info.FullMethod)
	if !s.cfg.ACL.Enabled || rule.access == accessOpen {
		return handler(srv, ss)
	}
	id, leader, err := s.identify(ss.Context())
	if err != nil {
		return err
	}
	if leader != "" {
		if info.FullMethod == workerStreamMethod {
			// A worker's stream must reach the leader itself, never a
			// proxy (workers_service.go); the worker dials the leader.
			return errUnknownToken
		}
		return s.forwardStream(ss, info, leader)
	}
	scope, err := s.authorize(id, rule, info.FullMethod, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(withIdentity(ss.Context(), id))
	defer cancel(nil)
	if !id.Munge {
		go s.recheckToken(ctx, ss.Context(), cancel)
	}
	err = handler(srv, &authorizedStream{
		ServerStream: ss, ctx: ctx,
		rule: rule, scope: scope, checkFirst: scope != nil && rule.check != nil,
	})
	if cause := context.Cause(ctx); cause != nil && status.Code(cause) == codes.Unauthenticated {
		return cause
	}
	return err
}

// tokenRecheckInterval is how often an open stream's token is checked
// again: a stream outlives many calls (a worker's lasts for days), and
// must end soon after its token is revoked or expires.
const tokenRecheckInterval = 500 * time.Millisecond

// recheckToken ends the stream of ctx, with the refusal as its cause,
// once the token in the caller's metadata (in call) stops working. It
// authenticates again only when the tokens changed (the FSM's ACL
// generation moved) or time passed an expiry, so that an idle check
// costs an atomic load.
func (s *Server) recheckToken(ctx, call context.Context, end context.CancelCauseFunc) {
	tick := time.NewTicker(tokenRecheckInterval)
	defer tick.Stop()
	gen := s.fsm.ACLGeneration()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g := s.fsm.ACLGeneration()
		if g == gen && !s.auth.mayHaveExpired(call, time.Now()) {
			continue
		}
		gen = g
		if _, err := s.auth.authenticate(call, time.Now()); err != nil {
			end(err)
			return
		}
	}
}

// authorizedStream is a server stream whose caller was authenticated. For
// a user it checks the first request and filters the answers.
type authorizedStream struct {
	grpc.ServerStream
	ctx        context.Context
	rule       methodRule
	scope      *userScope
	checkFirst bool
}

func (a *authorizedStream) Context() context.Context { return a.ctx }

func (a *authorizedStream) RecvMsg(m any) error {
	if err := a.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if a.checkFirst {
		a.checkFirst = false
		return a.rule.check(a.scope, m)
	}
	return nil
}

func (a *authorizedStream) SendMsg(m any) error {
	if a.scope != nil && a.rule.filter != nil {
		a.rule.filter(a.scope, m)
	}
	return a.ServerStream.SendMsg(m)
}
