package fsm

import "github.com/longfair/longfair/ledger"

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
