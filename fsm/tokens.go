package fsm

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// TokenRole is what a token may do.
type TokenRole string

// Token roles.
const (
	// RoleAdmin may call everything.
	RoleAdmin TokenRole = "admin"
	// RoleUser acts as one user: it reads and charges only the accounts
	// that user is a member of.
	RoleUser TokenRole = "user"
	// RoleWorker may hold a worker stream and find the leader.
	RoleWorker TokenRole = "worker"
)

// Valid reports whether r is one of the roles.
func (r TokenRole) Valid() bool { return r == RoleAdmin || r == RoleUser || r == RoleWorker }

// MaxTokenDescriptionBytes bounds a token's description.
const MaxTokenDescriptionBytes = 256

// CreateToken records a new API token. The server generates the secret
// and proposes only its SHA-256 (SecretHash, lower-case hex), so the log,
// the state and every snapshot hold nothing a caller could present.
// Bootstrap marks the cluster's first admin token: it is refused once any
// bootstrap token exists, which is what makes bootstrapping work once.
// Node binds a worker token to one node id; empty (as in every entry
// written before binding existed) leaves it unbound.
type CreateToken struct {
	ID          string      `json:"id"`
	SecretHash  string      `json:"secret_hash"`
	Role        TokenRole   `json:"role"`
	User        string      `json:"user,omitempty"`
	Description string      `json:"description,omitempty"`
	ExpiresAt   ledger.Time `json:"expires_at,omitempty"`
	Bootstrap   bool        `json:"bootstrap,omitempty"`
	Node        string      `json:"node,omitempty"`
}

// RevokeToken revokes the token with id ID; revoking a revoked token
// changes nothing.
type RevokeToken struct {
	ID string `json:"id"`
}

func (*CreateToken) Type() CommandType { return TypeCreateToken }
func (*RevokeToken) Type() CommandType { return TypeRevokeToken }

func (c *CreateToken) validate(r rules) *Error {
	if err := checkName("token id", c.ID); err != nil {
		return err
	}
	if !isTokenHash(c.SecretHash) {
		return invalid("token secret hash is not 64 lower-case hex digits: the server proposes the SHA-256 of the secret, never the secret")
	}
	if !c.Role.Valid() {
		return invalid("token role %q: use admin, user or worker", c.Role)
	}
	if c.Role == RoleUser || c.User != "" {
		if err := checkName("token user", c.User); err != nil {
			return err
		}
	}
	if c.Node != "" {
		if c.Role != RoleWorker {
			return invalid("token node %q is set for a %s token: only worker tokens are bound to a node", c.Node, c.Role)
		}
		if err := checkNodeID("token node", c.Node); err != nil {
			return err
		}
	}
	if c.Bootstrap && c.Role != RoleAdmin {
		return invalid("a bootstrap token must have role admin, not %s", c.Role)
	}
	if c.ExpiresAt < 0 {
		return invalid("token expiry %d is before 1970: leave it unset for a token that does not expire", c.ExpiresAt)
	}
	return r.text("token description", c.Description, MaxTokenDescriptionBytes)
}

func (c *RevokeToken) validate(r rules) *Error { return checkName("token id", c.ID) }

// isTokenHash reports whether h is a SHA-256 in lower-case hex.
func isTokenHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// createToken applies CreateToken; the result is a TokenInfo.
func (b *batch) createToken(c *CreateToken, t ledger.Time) (any, error) {
	acl := &b.st.acl
	if c.Bootstrap && acl.bootstrapped != 0 {
		return nil, refuse(KindPrecondition, "the ACL was bootstrapped already: bootstrapping works once; ask an admin for a token (longfair acl token create)")
	}
	if _, ok := acl.byID[c.ID]; ok {
		return nil, refuse(KindExists, "token id %q is taken: retry, and a new id is drawn", c.ID)
	}
	if _, ok := acl.byHash[c.SecretHash]; ok {
		return nil, refuse(KindExists, "a token with this secret exists already: use another secret")
	}
	if c.Role == RoleUser {
		if _, ok := b.st.users[c.User]; !ok {
			return nil, notFound("user %q does not exist: create the user before giving it a token", c.User)
		}
	}
	if c.ExpiresAt != 0 && c.ExpiresAt <= t {
		return nil, invalid("the token would expire before it is created: give a later expiry")
	}
	r := &tokenRecord{
		ID: c.ID, SecretHash: c.SecretHash, Role: c.Role, User: c.User, Description: c.Description,
		CreatedAt: t, ExpiresAt: c.ExpiresAt, Bootstrap: c.Bootstrap, Node: c.Node,
	}
	if err := putJSON(b.bucket(bucketTokens), []byte(r.ID), r); err != nil {
		return nil, err
	}
	acl.put(r)
	acl.dirty = true
	return tokenInfo(r), nil
}

// revokeToken applies RevokeToken; the result is a TokenInfo. It refuses
// to revoke the last usable admin token, which would leave nobody able to
// manage the cluster.
func (b *batch) revokeToken(c *RevokeToken, t ledger.Time) (any, error) {
	acl := &b.st.acl
	old, ok := acl.byID[c.ID]
	if !ok {
		return nil, notFound("token %q does not exist: list the tokens with 'longfair acl token list'", c.ID)
	}
	if old.RevokedAt != 0 {
		return tokenInfo(old), nil
	}
	if old.Role == RoleAdmin && old.usableAt(t) && acl.usableAdmins(t) == 1 {
		return nil, refuse(KindPrecondition, "token %q is the last usable admin token: create another admin token before revoking it", c.ID)
	}
	r := *old
	r.RevokedAt = t
	if err := putJSON(b.bucket(bucketTokens), []byte(r.ID), &r); err != nil {
		return nil, err
	}
	acl.put(&r)
	acl.dirty = true
	return tokenInfo(&r), nil
}

// usableAdmins counts the admin tokens usable at t.
func (a *aclState) usableAdmins(t ledger.Time) int {
	n := 0
	for _, r := range a.byID {
		if r.Role == RoleAdmin && r.usableAt(t) {
			n++
		}
	}
	return n
}

// bucketTokens holds the API tokens by id. Tokens are never deleted: a
// revoked one stays, so that listings show it and a caller presenting it
// is told it was revoked rather than that it is unknown.
var bucketTokens = []byte("acl_tokens")

// tokenRecord is a stored token: the hash of its secret, never the secret.
type tokenRecord struct {
	ID          string      `json:"id"`
	SecretHash  string      `json:"secret_hash"`
	Role        TokenRole   `json:"role"`
	User        string      `json:"user,omitempty"`
	Description string      `json:"description,omitempty"`
	CreatedAt   ledger.Time `json:"created_at"`
	ExpiresAt   ledger.Time `json:"expires_at,omitempty"`
	RevokedAt   ledger.Time `json:"revoked_at,omitempty"`
	Bootstrap   bool        `json:"bootstrap,omitempty"`
	// Node is the node a worker token is bound to; "" (and absent, in
	// records written before binding existed) is unbound.
	Node string `json:"node,omitempty"`
}

// usableAt reports whether the token lets calls through at t: not
// revoked and not expired.
func (r *tokenRecord) usableAt(t ledger.Time) bool {
	return r.RevokedAt == 0 && (r.ExpiresAt == 0 || t < r.ExpiresAt)
}

// aclState is the in-memory index of the tokens. Its zero value is empty
// and usable.
type aclState struct {
	byID   map[string]*tokenRecord
	byHash map[string]*tokenRecord
	// bootstrapped is when the bootstrap token was created; 0 before.
	bootstrapped ledger.Time
	// dirty is set by an apply that changed a token, until the batch
	// commits (see FSM.noteACLChanges).
	dirty bool
}

func (a *aclState) put(r *tokenRecord) {
	if a.byID == nil {
		a.byID = make(map[string]*tokenRecord)
		a.byHash = make(map[string]*tokenRecord)
	}
	a.byID[r.ID] = r
	a.byHash[r.SecretHash] = r
	if r.Bootstrap {
		a.bootstrapped = r.CreatedAt
	}
}

// load reads every token. A file written before tokens existed has no
// bucket, which is the same as none.
func (a *aclState) load(tx *bolt.Tx) error {
	b := tx.Bucket(bucketTokens)
	if b == nil {
		return nil
	}
	if err := forEachJSON(b, func(_ []byte, r *tokenRecord) { a.put(r) }); err != nil {
		return fmt.Errorf("acl tokens: %w", err)
	}
	return nil
}
