package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/ops"
)

// aclService implements longfairv1.ACLServer. Secrets are generated here,
// on the leader, and only their hashes are proposed: the log, the state
// and the snapshots never hold a secret, and neither does any log line.
type aclService struct {
	longfairv1.UnimplementedACLServer
	s *Server
}

func roleProto(r fsm.TokenRole) longfairv1.TokenRole {
	switch r {
	case fsm.RoleAdmin:
		return longfairv1.TokenRole_TOKEN_ROLE_ADMIN
	case fsm.RoleUser:
		return longfairv1.TokenRole_TOKEN_ROLE_USER
	case fsm.RoleWorker:
		return longfairv1.TokenRole_TOKEN_ROLE_WORKER
	}
	return longfairv1.TokenRole_TOKEN_ROLE_UNSPECIFIED
}

func roleFromProto(r longfairv1.TokenRole) (fsm.TokenRole, error) {
	switch r {
	case longfairv1.TokenRole_TOKEN_ROLE_ADMIN:
		return fsm.RoleAdmin, nil
	case longfairv1.TokenRole_TOKEN_ROLE_USER:
		return fsm.RoleUser, nil
	case longfairv1.TokenRole_TOKEN_ROLE_WORKER:
		return fsm.RoleWorker, nil
	}
	return "", status.Errorf(codes.InvalidArgument, "role is %v: give TOKEN_ROLE_ADMIN, TOKEN_ROLE_USER or TOKEN_ROLE_WORKER", r)
}

func tokenProto(t fsm.TokenInfo) *longfairv1.Token {
	return &longfairv1.Token{
		Id: t.ID, Role: roleProto(t.Role), User: t.User, Description: t.Description,
		CreatedAt: timestamp(t.CreatedAt), ExpiresAt: timestamp(t.ExpiresAt), RevokedAt: timestamp(t.RevokedAt),
		Bootstrap: t.Bootstrap, Node: t.Node,
	}
}

// createToken proposes a token with a fresh id and secret and returns it
// with the secret. An id that happens to be taken is drawn again.
func (a *aclService) createToken(ctx context.Context, cmd fsm.CreateToken) (*longfairv1.CreatedToken, error) {
	secret, err := ops.NewTokenSecret()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	cmd.SecretHash = ops.HashTokenSecret(secret)
	for attempt := 0; ; attempt++ {
		if cmd.ID, err = ops.NewTokenID(); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		info, err := proposeFor[fsm.TokenInfo](ctx, a.s, &cmd)
		if status.Code(err) == codes.AlreadyExists && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		a.s.logger.Info("acl token created", "token_id", info.ID, "role", info.Role, "user", info.User, "node", info.Node, "bootstrap", info.Bootstrap)
		return &longfairv1.CreatedToken{Token: tokenProto(info), Secret: secret}, nil
	}
}

func (a *aclService) Bootstrap(ctx context.Context, _ *longfairv1.BootstrapACLRequest) (*longfairv1.CreatedToken, error) {
	if ok, _ := a.s.fsm.ACLBootstrapped(); ok {
		// Answered without a proposal; the FSM would refuse it the same way.
		return nil, status.Error(codes.FailedPrecondition, "the ACL was bootstrapped already: bootstrapping works once; ask an admin for a token (longfair acl token create)")
	}
	return a.createToken(ctx, fsm.CreateToken{Role: fsm.RoleAdmin, Bootstrap: true, Description: "bootstrap token"})
}

func (a *aclService) CreateToken(ctx context.Context, req *longfairv1.CreateTokenRequest) (*longfairv1.CreatedToken, error) {
	role, err := roleFromProto(req.GetRole())
	if err != nil {
		return nil, err
	}
	cmd := fsm.CreateToken{Role: role, User: req.GetUser(), Description: req.GetDescription(), Node: req.GetNode()}
	if ttl := req.GetTtl(); ttl != nil {
		cmd.ExpiresAt = ledger.Time(time.Now().Add(ttl.AsDuration()).UnixNano())
	}
	return a.createToken(ctx, cmd)
}

func (a *aclService) ListTokens(ctx context.Context, req *longfairv1.ListTokensRequest) (*longfairv1.ListTokensResponse, error) {
	after, err := decodeToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	list, next := a.s.fsm.Tokens(after, pageSize(req.GetPageSize()))
	out := &longfairv1.ListTokensResponse{NextPageToken: encodeToken(next)}
	for _, t := range list {
		out.Tokens = append(out.Tokens, tokenProto(t))
	}
	return out, nil
}

func (a *aclService) RevokeToken(ctx context.Context, req *longfairv1.RevokeTokenRequest) (*longfairv1.Token, error) {
	info, err := proposeFor[fsm.TokenInfo](ctx, a.s, &fsm.RevokeToken{ID: req.GetId()})
	if err != nil {
		return nil, err
	}
	a.s.logger.Info("acl token revoked", "token_id", info.ID, "role", info.Role, "user", info.User)
	return tokenProto(info), nil
}

// WhoAmI answers with the caller's token. It authenticates the call
// itself, so that it also answers while the ACL is not enforced. A call
// authenticated by a MUNGE credential has no token: the answer is the
// user the credential's uid is, as a user token of it would say (the CLI
// asks it to default --user).
func (a *aclService) WhoAmI(ctx context.Context, _ *longfairv1.WhoAmIRequest) (*longfairv1.Token, error) {
	id, ok := IdentityFrom(ctx)
	if !ok {
		var err error
		if id, err = a.s.auth.authenticate(ctx, time.Now()); err != nil {
			return nil, err
		}
	}
	if id.Munge {
		return &longfairv1.Token{Id: id.TokenID, Role: roleProto(id.Role), User: id.User,
			Description: "a MUNGE credential (" + id.TokenID + ")"}, nil
	}
	info, err := a.s.fsm.Token(id.TokenID)
	if err != nil {
		return nil, err
	}
	return tokenProto(info), nil
}
