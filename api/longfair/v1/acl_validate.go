package longfairv1

import (
	"time"

	"github.com/longfair/longfair/core"
)

// Limits of the ACL service.
const (
	MaxTokenDescriptionBytes = 256
	MaxTokenTTL              = 10 * 365 * 24 * time.Hour
)

// Validate checks a BootstrapACLRequest (it has no fields).
func (r *BootstrapACLRequest) Validate() error { return nil }

// Validate checks a CreateTokenRequest.
func (r *CreateTokenRequest) Validate() error {
	switch r.GetRole() {
	case TokenRole_TOKEN_ROLE_ADMIN, TokenRole_TOKEN_ROLE_WORKER:
		if err := checkOptionalName("user", r.GetUser()); err != nil {
			return err
		}
	case TokenRole_TOKEN_ROLE_USER:
		if r.GetUser() == "" {
			return bad("a USER token needs user: the user it acts as")
		}
		if err := checkName("user", r.GetUser()); err != nil {
			return err
		}
	default:
		return bad("role is %v: give TOKEN_ROLE_ADMIN, TOKEN_ROLE_USER or TOKEN_ROLE_WORKER", r.GetRole())
	}
	if r.GetNode() != "" {
		if r.GetRole() != TokenRole_TOKEN_ROLE_WORKER {
			return bad("node %q is set for a %s token: only WORKER tokens are bound to a node; leave node empty, or give role TOKEN_ROLE_WORKER", r.GetNode(), r.GetRole())
		}
		if err := CheckNodeID("node", r.GetNode()); err != nil {
			return err
		}
	}
	if err := checkText("description", r.GetDescription(), MaxTokenDescriptionBytes); err != nil {
		return err
	}
	if r.GetTtl() != nil {
		if err := checkDuration("ttl", r.GetTtl(), false, MaxTokenTTL); err != nil {
			return err
		}
		if r.GetTtl().AsDuration() < time.Second {
			return bad("ttl is %v: give at least one second, or leave it unset for a token that does not expire", r.GetTtl().AsDuration())
		}
	}
	return nil
}

// CheckNodeID checks a node id by the rule workers and servers follow for
// their --node-id (core.CheckNodeID): 1–255 bytes of letters, digits, '.',
// '_', '-' or ':', starting with a letter or digit. Its error is
// InvalidArgument and names field.
func CheckNodeID(field, id string) error { return invalidIf(core.CheckNodeID(field, id)) }

// Validate checks a ListTokensRequest.
func (r *ListTokensRequest) Validate() error { return checkPage(r.GetPageSize(), r.GetPageToken()) }

// Validate checks a RevokeTokenRequest.
func (r *RevokeTokenRequest) Validate() error { return checkName("id", r.GetId()) }

// Validate checks a WhoAmIRequest (it has no fields).
func (r *WhoAmIRequest) Validate() error { return nil }
