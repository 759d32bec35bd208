package server

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ops"
)

// A call may carry a MUNGE credential instead of a token
// ("authorization: MUNGE <credential>", ops/munge.go) when the servers
// have a munged (ACLConfig.MungeSocket). munged decodes it and refuses
// expired, replayed and forged ones; the uid it names is mapped to the
// longfair user of that Unix account (fsm.UserByUnix), and the call acts
// as that user, as a user token of it would.
//
// munged refuses a credential decoded twice, so only the leader decodes
// one: a follower hands such a call to the leader undecoded (identify),
// as it does a token it does not know yet. A stream authenticated by a
// credential is not checked again while it lasts (recheckToken would
// replay it).

// mungeCredential returns the credential in an authorization value, if
// it holds one.
func mungeCredential(header string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, ops.MungeScheme) {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// carriesMunge reports whether the call in ctx carries a MUNGE credential.
func carriesMunge(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(longfairv1.AuthorizationMetadataKey)
	if len(vals) != 1 {
		return false
	}
	_, ok := mungeCredential(vals[0])
	return ok
}

// authenticateMunge decodes a credential and finds its user.
func (a *authenticator) authenticateMunge(ctx context.Context, cred string) (Identity, error) {
	if a.mungeSocket == "" {
		return Identity{}, status.Error(codes.Unauthenticated,
			"this cluster does not accept MUNGE credentials (its servers have no munge_socket): use a token (--token or LONGFAIR_TOKEN)")
	}
	id, err := ops.DecodeMunge(ctx, a.mungeSocket, cred)
	if errors.Is(err, ops.ErrMungeRefused) {
		return Identity{}, status.Errorf(codes.Unauthenticated, "%v: make a new one (each call needs its own, within its lifetime), or use a token", err)
	}
	if err != nil {
		return Identity{}, status.Errorf(codes.Unavailable, "this server cannot check MUNGE credentials now (%v); retry, or use a token", err)
	}
	name := ""
	if u, err := user.LookupId(strconv.FormatUint(uint64(id.UID), 10)); err == nil {
		name = u.Username
	}
	info, ok := a.fsm.UserByUnix(id.UID, name)
	if !ok {
		who := fmt.Sprintf("uid %d", id.UID)
		if name != "" {
			who = fmt.Sprintf("Unix user %s (uid %d)", name, id.UID)
		}
		return Identity{}, status.Errorf(codes.PermissionDenied,
			"%s is no longfair user: ask an admin to create a user of that name or map one to it ('longfair user set NAME --unix-user %s'), or use a token", who, name)
	}
	return Identity{TokenID: fmt.Sprintf("munge:uid=%d", id.UID), Role: fsm.RoleUser, User: info.Name, Munge: true}, nil
}
