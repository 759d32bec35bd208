package server

import (
	"context"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// unixProto is a user's or job's Unix account; nil for the default.
func unixProto(u fsm.UnixIdentity) *longfairv1.UnixIdentity {
	if u.IsZero() {
		return nil
	}
	return &longfairv1.UnixIdentity{UnixUser: u.User, Uid: u.UID, Gid: u.GID}
}

// SetUserUnix maps a user to a Unix account (fsm/identity.go).
func (u *usersService) SetUserUnix(ctx context.Context, req *longfairv1.SetUserUnixRequest) (*longfairv1.User, error) {
	id := req.GetUnix()
	cmd := &fsm.SetUserUnix{User: req.GetUser(), Clear: req.GetClear()}
	if id != nil {
		cmd.Unix = fsm.UnixIdentity{User: id.GetUnixUser(), UID: id.Uid, GID: id.Gid}
	}
	info, err := proposeFor[fsm.UserInfo](ctx, u.s, cmd)
	if err != nil {
		return nil, err
	}
	return userProto(info), nil
}
