package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// CreateAccount adds an account. Weight and Contribution are optional; see
// AccountInfo for how the effective weight is chosen.
type CreateAccount struct {
	Name         string   `json:"name"`
	Weight       *float64 `json:"weight,omitempty"`
	Contribution *float64 `json:"contribution,omitempty"`
}

func (*CreateAccount) Type() CommandType { return TypeCreateAccount }

func (c *CreateAccount) validate(r rules) *Error {
	if err := checkName("account name", c.Name); err != nil {
		return err
	}
	return checkAccountShares(c.Weight, c.Contribution)
}

// checkAccountShares checks an account's weight and contribution, where
// given.
func checkAccountShares(weight, contribution *float64) *Error {
	if weight != nil {
		if err := checkQuantity("weight", *weight); err != nil {
			return err
		}
	}
	if contribution != nil {
		return checkQuantity("contribution", *contribution)
	}
	return nil
}

// UpdateAccount sets or clears an account's admin weight and contribution.
type UpdateAccount struct {
	Name              string   `json:"name"`
	Weight            *float64 `json:"weight,omitempty"`
	Contribution      *float64 `json:"contribution,omitempty"`
	ClearWeight       bool     `json:"clear_weight,omitempty"`
	ClearContribution bool     `json:"clear_contribution,omitempty"`
}

func (*UpdateAccount) Type() CommandType { return TypeUpdateAccount }

func (c *UpdateAccount) validate(r rules) *Error {
	if err := checkName("account name", c.Name); err != nil {
		return err
	}
	if c.Weight != nil && c.ClearWeight {
		return invalid("weight is both set and cleared: do one or the other")
	}
	if c.Contribution != nil && c.ClearContribution {
		return invalid("contribution is both set and cleared: do one or the other")
	}
	if c.Weight == nil && c.Contribution == nil && !c.ClearWeight && !c.ClearContribution {
		return invalid("nothing to update: set or clear the weight or the contribution")
	}
	return checkAccountShares(c.Weight, c.Contribution)
}

// CreateUser adds a user and makes it a member of Accounts.
type CreateUser struct {
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
}

func (*CreateUser) Type() CommandType { return TypeCreateUser }

func (c *CreateUser) validate(r rules) *Error {
	if err := checkName("user name", c.Name); err != nil {
		return err
	}
	if len(c.Accounts) > MaxMemberships {
		return invalid("%d accounts given: a user can be a member of at most %d", len(c.Accounts), MaxMemberships)
	}
	return checkDistinctNames("account", c.Accounts)
}

// AddMembership makes User a member of Account; a no-op when it already is.
type AddMembership struct {
	User    string `json:"user"`
	Account string `json:"account"`
}

func (*AddMembership) Type() CommandType { return TypeAddMembership }

func (c *AddMembership) validate(r rules) *Error { return checkMembership(c.User, c.Account) }

// RemoveMembership ends User's membership of Account; a no-op when it is not one.
type RemoveMembership struct {
	User    string `json:"user"`
	Account string `json:"account"`
}

func (*RemoveMembership) Type() CommandType { return TypeRemoveMembership }

func (c *RemoveMembership) validate(r rules) *Error { return checkMembership(c.User, c.Account) }

func checkMembership(user, account string) *Error {
	if err := checkName("user name", user); err != nil {
		return err
	}
	return checkName("account name", account)
}

// checkDistinctNames checks each name of a list of kind (account,
// resource) and that none is listed twice.
func checkDistinctNames(kind string, names []string) *Error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := checkName(kind+" name", n); err != nil {
			return err
		}
		if seen[n] {
			return invalid("%s %q is listed twice: list each %s once", kind, n, kind)
		}
		seen[n] = true
	}
	return nil
}

type accountRecord struct {
	Name         string      `json:"name"`
	AdminWeight  *float64    `json:"admin_weight,omitempty"`
	Contribution *float64    `json:"contribution,omitempty"`
	CreatedAt    ledger.Time `json:"created_at"`
	// Group is the account's parent in the account tree; empty is the
	// root (groups.go).
	Group string `json:"group,omitempty"`
	// Limits bound the account's work (limits.go).
	Limits Limits `json:"limits,omitzero"`
}

type userRecord struct {
	Name      string      `json:"name"`
	Accounts  []string    `json:"accounts"` // sorted
	CreatedAt ledger.Time `json:"created_at"`
	// Unix is the Unix account the user's tasks run as (identity.go);
	// absent is the default, as in records written before it existed.
	Unix UnixIdentity `json:"unix,omitzero"`
	// Limits bound the user's work (limits.go).
	Limits Limits `json:"limits,omitzero"`
}

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
