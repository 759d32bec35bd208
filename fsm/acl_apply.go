package fsm

import (
	"github.com/longfair/longfair/ledger"
)

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
