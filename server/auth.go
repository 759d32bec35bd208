package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/ops"
)

// Identity is who a call was made as: the token that authenticated it.
type Identity struct {
	TokenID string
	Role    fsm.TokenRole
	// User is the user a user token acts as (for other roles, who holds it).
	User string
	// Node is the node id a worker token is bound to; "" for an unbound
	// worker token (any node) and for the other roles.
	Node string
	// Munge is set when a MUNGE credential authenticated the call
	// (auth_munge.go); TokenID is then "munge:uid=N".
	Munge bool
}

type identityKey struct{}

// IdentityFrom returns the identity the server authenticated the call in
// ctx with; false when the call carried no token the server checked (the
// ACL is disabled, or the method is open).
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

func withIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// errUnknownToken is the refusal of a well-formed token the cluster does
// not know. A follower that has not applied a token just created yet
// would give it too, so a follower hands such calls to the leader (see
// authUnary) instead of answering it.
var errUnknownToken = status.Error(codes.Unauthenticated,
	"the token is not known to the cluster: check LONGFAIR_TOKEN or --token, or ask an admin for a token ('longfair acl token create')")

// authenticator resolves bearer secrets to tokens. It caches what it
// resolved by the secret's hash and drops the cache whenever the FSM's
// ACL generation moves, which happens before a token change is
// acknowledged: a revoked token is never served from the cache.
type authenticator struct {
	fsm *fsm.FSM
	// mungeSocket is the munged that decodes MUNGE credentials; "" refuses them.
	mungeSocket string

	mu    sync.RWMutex
	gen   uint64
	cache map[string]fsm.TokenInfo // by secret hash; only known tokens
}

// maxCachedTokens bounds the cache; past it the cache starts over.
// Unknown tokens are never cached, so random guesses cannot grow it.
const maxCachedTokens = 10_000

func newAuthenticator(f *fsm.FSM) *authenticator {
	return &authenticator{fsm: f, cache: make(map[string]fsm.TokenInfo)}
}

// lookup returns the token whose secret hashes to hash.
func (a *authenticator) lookup(hash string) (fsm.TokenInfo, bool) {
	gen := a.fsm.ACLGeneration()
	a.mu.RLock()
	if a.gen == gen {
		if t, ok := a.cache[hash]; ok {
			a.mu.RUnlock()
			return t, true
		}
	}
	a.mu.RUnlock()
	t, ok := a.fsm.TokenBySecretHash(hash)
	if !ok {
		return t, false
	}
	a.mu.Lock()
	if a.gen != gen || len(a.cache) >= maxCachedTokens {
		clear(a.cache)
		a.gen = gen
	}
	a.cache[hash] = t
	a.mu.Unlock()
	return t, true
}

// authenticate finds the token of the call in ctx and checks that it may
// be used now. Its errors are Unauthenticated and never quote the token.
func (a *authenticator) authenticate(ctx context.Context, now time.Time) (Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(longfairv1.AuthorizationMetadataKey)
	if len(vals) == 0 {
		return Identity{}, status.Error(codes.Unauthenticated,
			"this call needs a token: set LONGFAIR_TOKEN or pass --token (an admin creates tokens with 'longfair acl token create')")
	}
	if len(vals) > 1 {
		return Identity{}, status.Error(codes.Unauthenticated, "the call carries more than one authorization header: send exactly one \"Bearer <token>\"")
	}
	if cred, ok := mungeCredential(vals[0]); ok {
		return a.authenticateMunge(ctx, cred)
	}
	secret, err := ops.ParseBearer(vals[0])
	if errors.Is(err, ops.ErrNoBearer) {
		return Identity{}, status.Error(codes.Unauthenticated, "the authorization header holds no token: send \"Bearer <token>\"")
	}
	if err != nil {
		return Identity{}, status.Errorf(codes.Unauthenticated, "%v: send \"Bearer <token>\" with the token an admin gave you", err)
	}
	t, ok := a.lookup(ops.HashTokenSecret(secret))
	if !ok {
		return Identity{}, errUnknownToken
	}
	if t.RevokedAt != 0 {
		return Identity{}, status.Errorf(codes.Unauthenticated, "token %s was revoked at %s: ask an admin for a new one",
			t.ID, time.Unix(0, int64(t.RevokedAt)).UTC().Format(time.RFC3339))
	}
	if t.ExpiresAt != 0 && ledger.Time(now.UnixNano()) >= t.ExpiresAt {
		return Identity{}, status.Errorf(codes.Unauthenticated, "token %s expired at %s: ask an admin for a new one",
			t.ID, time.Unix(0, int64(t.ExpiresAt)).UTC().Format(time.RFC3339))
	}
	return Identity{TokenID: t.ID, Role: t.Role, User: t.User, Node: t.Node}, nil
}

// mayHaveExpired reports whether the token of the call in ctx has an
// expiry at or before now, from the cache alone; an unknown token
// answers true, so that the caller checks it properly.
func (a *authenticator) mayHaveExpired(ctx context.Context, now time.Time) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(longfairv1.AuthorizationMetadataKey)
	if len(vals) != 1 {
		return true
	}
	secret, err := ops.ParseBearer(vals[0])
	if err != nil {
		return true
	}
	t, ok := a.lookup(ops.HashTokenSecret(secret))
	return !ok || t.ExpiresAt != 0 && ledger.Time(now.UnixNano()) >= t.ExpiresAt
}
