package fsm

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

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
