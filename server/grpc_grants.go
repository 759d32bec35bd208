package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// grantsService implements longfairv1.GrantsServer.
type grantsService struct {
	longfairv1.UnimplementedGrantsServer
	s *Server
}

func grantProto(g fsm.GrantInfo) *longfairv1.Grant {
	return &longfairv1.Grant{
		Id: g.ID, Account: g.Account, AmountMicroSu: int64(g.Amount),
		ExpiresAt: timestamp(g.Expires), GrantedAt: timestamp(g.GrantedAt), Note: g.Note,
	}
}

func (g *grantsService) CreateGrant(ctx context.Context, req *longfairv1.CreateGrantRequest) (*longfairv1.Grant, error) {
	// The FSM refuses an expiry not after the entry's time; this says so
	// before anything is proposed, and also catches 1970-01-01T00:00:00Z,
	// which the FSM would read as "never expires".
	if exp := req.GetExpiresAt(); exp != nil && !exp.AsTime().After(time.Now()) {
		return nil, status.Errorf(codes.InvalidArgument, "expires_at %s is not in the future: give a later expiry, or none for a grant that never expires",
			exp.AsTime().UTC().Format(time.RFC3339))
	}
	info, err := proposeFor[fsm.GrantInfo](ctx, g.s, &fsm.Grant{
		ID: req.GetId(), Account: req.GetAccount(), Amount: ledger.SU(req.GetAmountMicroSu()),
		Expires: ledgerTime(req.GetExpiresAt()), Note: req.GetNote(),
	})
	if err != nil {
		return nil, err
	}
	return grantProto(info), nil
}

func (g *grantsService) ListGrants(ctx context.Context, req *longfairv1.ListGrantsRequest) (*longfairv1.ListGrantsResponse, error) {
	after, err := decodeToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	list, next, err := g.s.fsm.Grants(req.GetAccount(), after, pageSize(req.GetPageSize()))
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListGrantsResponse{NextPageToken: encodeToken(next)}
	for _, info := range list {
		out.Grants = append(out.Grants, grantProto(info))
	}
	return out, nil
}
