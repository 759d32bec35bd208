package server

import (
	"context"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// usersService implements longfairv1.UsersServer.
type usersService struct {
	longfairv1.UnimplementedUsersServer
	s *Server
}

func userProto(u fsm.UserInfo) *longfairv1.User {
	return &longfairv1.User{Name: u.Name, Accounts: u.Accounts, CreatedAt: timestamp(u.CreatedAt), Unix: unixProto(u.Unix), Limits: limitsProto(u.Limits)}
}

func (u *usersService) CreateUser(ctx context.Context, req *longfairv1.CreateUserRequest) (*longfairv1.User, error) {
	info, err := proposeFor[fsm.UserInfo](ctx, u.s, &fsm.CreateUser{Name: req.GetName(), Accounts: req.GetAccounts()})
	if err != nil {
		return nil, err
	}
	return userProto(info), nil
}

func (u *usersService) AddMembership(ctx context.Context, req *longfairv1.MembershipRequest) (*longfairv1.User, error) {
	info, err := proposeFor[fsm.UserInfo](ctx, u.s, &fsm.AddMembership{User: req.GetUser(), Account: req.GetAccount()})
	if err != nil {
		return nil, err
	}
	return userProto(info), nil
}

func (u *usersService) RemoveMembership(ctx context.Context, req *longfairv1.MembershipRequest) (*longfairv1.User, error) {
	info, err := proposeFor[fsm.UserInfo](ctx, u.s, &fsm.RemoveMembership{User: req.GetUser(), Account: req.GetAccount()})
	if err != nil {
		return nil, err
	}
	return userProto(info), nil
}

func (u *usersService) GetUser(ctx context.Context, req *longfairv1.GetUserRequest) (*longfairv1.User, error) {
	info, err := u.s.fsm.User(req.GetName())
	if err != nil {
		return nil, err
	}
	return userProto(info), nil
}

func (u *usersService) ListUsers(ctx context.Context, req *longfairv1.ListUsersRequest) (*longfairv1.ListUsersResponse, error) {
	after, err := decodeToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	list, next := u.s.fsm.Users(req.GetAccount(), after, pageSize(req.GetPageSize()))
	out := &longfairv1.ListUsersResponse{NextPageToken: encodeToken(next)}
	for _, info := range list {
		out.Users = append(out.Users, userProto(info))
	}
	return out, nil
}
