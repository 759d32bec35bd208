package server

import (
	"context"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// accountsService implements longfairv1.AccountsServer.
type accountsService struct {
	longfairv1.UnimplementedAccountsServer
	s *Server
}

func accountProto(a fsm.AccountInfo) *longfairv1.Account {
	out := &longfairv1.Account{
		Name:         a.Name,
		Weight:       a.Weight,
		WeightSource: weightSourceProto(a.WeightSource),
		AdminWeight:  a.AdminWeight,
		Contribution: a.Contribution,
		Contributed:  a.Contributed,
		CreatedAt:    timestamp(a.CreatedAt),
		Group:        a.Group,
		Limits:       limitsProto(a.Limits),
	}
	return out
}

// limitsProto is the API form of limits; nil for none.
func limitsProto(l fsm.Limits) *longfairv1.Limits {
	if l == (fsm.Limits{}) {
		return nil
	}
	return &longfairv1.Limits{MaxJobs: int32(l.MaxJobs), MaxJobMicroSu: int64(l.MaxJobSU), MaxWalltime: optionalDuration(l.MaxWalltime),
		MaxRunningTasks: int32(l.MaxRunningTasks), MaxRunningNodes: int32(l.MaxRunningNodes)}
}

func (a *accountsService) SetLimits(ctx context.Context, req *longfairv1.SetLimitsRequest) (*longfairv1.Limits, error) {
	l := req.GetLimits()
	set, err := proposeFor[fsm.Limits](ctx, a.s, &fsm.SetLimits{Account: req.GetAccount(), User: req.GetUser(), Limits: fsm.Limits{
		MaxJobs: int(l.GetMaxJobs()), MaxWalltime: l.GetMaxWalltime().AsDuration(), MaxJobSU: ledger.SU(l.GetMaxJobMicroSu()),
		MaxRunningTasks: int(l.GetMaxRunningTasks()), MaxRunningNodes: int(l.GetMaxRunningNodes()),
	}})
	if err != nil {
		return nil, err
	}
	if out := limitsProto(set); out != nil {
		return out, nil
	}
	return &longfairv1.Limits{}, nil
}

func weightSourceProto(s fsm.WeightSource) longfairv1.WeightSource {
	switch s {
	case fsm.WeightAdmin:
		return longfairv1.WeightSource_WEIGHT_SOURCE_ADMIN
	case fsm.WeightContribution:
		return longfairv1.WeightSource_WEIGHT_SOURCE_CONTRIBUTION
	case fsm.WeightNodes:
		return longfairv1.WeightSource_WEIGHT_SOURCE_NODES
	}
	return longfairv1.WeightSource_WEIGHT_SOURCE_UNSPECIFIED
}

func (a *accountsService) CreateAccount(ctx context.Context, req *longfairv1.CreateAccountRequest) (*longfairv1.Account, error) {
	info, err := proposeFor[fsm.AccountInfo](ctx, a.s, &fsm.CreateAccount{Name: req.GetName(), Weight: req.Weight, Contribution: req.Contribution})
	if err != nil {
		return nil, err
	}
	return accountProto(info), nil
}

func (a *accountsService) UpdateAccount(ctx context.Context, req *longfairv1.UpdateAccountRequest) (*longfairv1.Account, error) {
	info, err := proposeFor[fsm.AccountInfo](ctx, a.s, &fsm.UpdateAccount{
		Name: req.GetName(), Weight: req.Weight, Contribution: req.Contribution,
		ClearWeight: req.GetClearWeight(), ClearContribution: req.GetClearContribution(),
	})
	if err != nil {
		return nil, err
	}
	return accountProto(info), nil
}

func (a *accountsService) GetAccount(ctx context.Context, req *longfairv1.GetAccountRequest) (*longfairv1.Account, error) {
	info, err := a.s.fsm.Account(req.GetName())
	if err != nil {
		return nil, err
	}
	return accountProto(info), nil
}

func (a *accountsService) ListAccounts(ctx context.Context, req *longfairv1.ListAccountsRequest) (*longfairv1.ListAccountsResponse, error) {
	after, err := decodeToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	list, next := a.s.fsm.Accounts(after, pageSize(req.GetPageSize()))
	out := &longfairv1.ListAccountsResponse{NextPageToken: encodeToken(next)}
	for _, info := range list {
		out.Accounts = append(out.Accounts, accountProto(info))
	}
	return out, nil
}
