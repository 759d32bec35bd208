package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// TokenInfo is a token as the API shows it: everything but the hash of
// its secret.
type TokenInfo struct {
	ID          string
	Role        TokenRole
	User        string
	Description string
	CreatedAt   ledger.Time
	ExpiresAt   ledger.Time // 0: never
	RevokedAt   ledger.Time // 0: not revoked
	Bootstrap   bool
	// Node is the node id a worker token is bound to; "" is unbound (any
	// node).
	Node string
}

// UsableAt reports whether the token lets calls through at t.
func (i TokenInfo) UsableAt(t ledger.Time) bool {
	return i.RevokedAt == 0 && (i.ExpiresAt == 0 || t < i.ExpiresAt)
}

func tokenInfo(r *tokenRecord) TokenInfo {
	return TokenInfo{
		ID: r.ID, Role: r.Role, User: r.User, Description: r.Description,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, Bootstrap: r.Bootstrap, Node: r.Node,
	}
}

// TokenBySecretHash returns the token whose secret hashes to hash
// (HashTokenSecret in package ops), revoked or not.
func (f *FSM) TokenBySecretHash(hash string) (TokenInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	r, ok := f.st.acl.byHash[hash]
	if !ok {
		return TokenInfo{}, false
	}
	return tokenInfo(r), true
}

// Token returns the token with the given id.
func (f *FSM) Token(id string) (TokenInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	r, ok := f.st.acl.byID[id]
	if !ok {
		return TokenInfo{}, notFound("token %q does not exist: list the tokens with 'longfair acl token list'", id)
	}
	return tokenInfo(r), nil
}

// Tokens lists tokens in id order after the id after.
func (f *FSM) Tokens(after string, limit int) (tokens []TokenInfo, next string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	ids := sortedKeys(f.st.acl.byID)
	i, found := slices.BinarySearch(ids, after)
	if found {
		i++
	}
	limit = pageLimit(limit)
	for ; i < len(ids) && len(tokens) < limit; i++ {
		tokens = append(tokens, tokenInfo(f.st.acl.byID[ids[i]]))
	}
	if i < len(ids) && len(tokens) > 0 {
		next = tokens[len(tokens)-1].ID
	}
	return tokens, next
}

// ACLBootstrapped reports whether the bootstrap token was created, and when.
func (f *FSM) ACLBootstrapped() (bool, ledger.Time) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.acl.bootstrapped != 0, f.st.acl.bootstrapped
}

// ACLGeneration changes whenever the tokens may have changed: after a
// batch with a token command commits, and after the state is reloaded or
// restored. It is read without the FSM's lock, so a server can keep a
// cache of resolved tokens and check on every call, cheaply, that the
// cache is still good. It changes before the apply that caused it
// returns, so once a revocation is acknowledged no call gets through on
// a cached copy.
func (f *FSM) ACLGeneration() uint64 { return f.aclGen.Load() }

// noteACLChanges moves the generation on when the batch that just
// committed changed a token. It looks at the state, not at the entries,
// so it holds however the entries were encoded.
func (f *FSM) noteACLChanges() {
	if f.st.acl.dirty {
		f.st.acl.dirty = false
		f.aclGen.Add(1)
	}
}
