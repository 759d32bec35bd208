package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// createAccount applies CreateAccount; the result is an AccountInfo.
func (b *batch) createAccount(c *CreateAccount, t ledger.Time) (any, error) {
	st := b.st
	if _, ok := st.accounts[c.Name]; ok {
		return nil, refuse(KindExists, "account %q already exists: pick another name, or update it with UpdateAccount", c.Name)
	}
	a := &accountRecord{Name: c.Name, AdminWeight: c.Weight, Contribution: c.Contribution, CreatedAt: t}
	if err := putJSON(b.bucket(bucketAccounts), []byte(a.Name), a); err != nil {
		return nil, err
	}
	st.accounts[a.Name] = a
	i, _ := slices.BinarySearch(st.accountNames, a.Name)
	st.accountNames = slices.Insert(st.accountNames, i, a.Name)
	// A new account changes Σw, so every share changes.
	b.all = true
	st.recomputeWeights()
	return st.accountInfo(a), nil
}

// updateAccount applies UpdateAccount; the result is an AccountInfo.
func (b *batch) updateAccount(c *UpdateAccount) (any, error) {
	st := b.st
	old, ok := st.accounts[c.Name]
	if !ok {
		return nil, notFound("account %q does not exist: check the name, or create it first", c.Name)
	}
	a := *old
	switch {
	case c.ClearWeight:
		a.AdminWeight = nil
	case c.Weight != nil:
		a.AdminWeight = c.Weight
	}
	switch {
	case c.ClearContribution:
		a.Contribution = nil
	case c.Contribution != nil:
		a.Contribution = c.Contribution
	}
	if err := putJSON(b.bucket(bucketAccounts), []byte(a.Name), &a); err != nil {
		return nil, err
	}
	st.accounts[a.Name] = &a
	b.all = true
	st.recomputeWeights()
	return st.accountInfo(&a), nil
}

// createUser applies CreateUser; the result is a UserInfo.
func (b *batch) createUser(c *CreateUser, t ledger.Time) (any, error) {
	st := b.st
	if _, ok := st.users[c.Name]; ok {
		return nil, refuse(KindExists, "user %q already exists: pick another name, or add memberships with AddMembership", c.Name)
	}
	for _, a := range c.Accounts {
		if _, ok := st.accounts[a]; !ok {
			return nil, notFound("account %q does not exist: create it before making %q a member", a, c.Name)
		}
	}
	u := &userRecord{Name: c.Name, Accounts: slices.Sorted(slices.Values(c.Accounts)), CreatedAt: t}
	if u.Accounts == nil {
		u.Accounts = []string{}
	}
	if err := putJSON(b.bucket(bucketUsers), []byte(u.Name), u); err != nil {
		return nil, err
	}
	st.users[u.Name] = u
	return userInfo(u), nil
}

// setMembership applies AddMembership and RemoveMembership; the result is a
// UserInfo. Both are idempotent.
func (b *batch) setMembership(user, account string, member bool) (any, error) {
	st := b.st
	old, ok := st.users[user]
	if !ok {
		return nil, notFound("user %q does not exist: check the name, or create the user first", user)
	}
	if _, ok := st.accounts[account]; !ok && member {
		return nil, notFound("account %q does not exist: check the name, or create the account first", account)
	}
	i, has := slices.BinarySearch(old.Accounts, account)
	if has == member {
		return userInfo(old), nil
	}
	if member && len(old.Accounts) >= MaxMemberships {
		return nil, refuse(KindPrecondition, "user %q is already a member of %d accounts, the most allowed: remove one first", user, MaxMemberships)
	}
	u := *old
	if member {
		u.Accounts = slices.Insert(slices.Clone(old.Accounts), i, account)
	} else {
		u.Accounts = slices.Delete(slices.Clone(old.Accounts), i, i+1)
	}
	if err := putJSON(b.bucket(bucketUsers), []byte(u.Name), &u); err != nil {
		return nil, err
	}
	st.users[u.Name] = &u
	return userInfo(&u), nil
}
