package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// AccountInfo is an account.
type AccountInfo struct {
	Name string
	// Weight is the effective weight w_i the policies use; WeightSource
	// says where it comes from.
	Weight       float64
	WeightSource WeightSource
	AdminWeight  *float64
	Contribution *float64
	// Contributed is the capacity of the up nodes the account contributed.
	Contributed map[string]float64
	CreatedAt   ledger.Time
	// Group is the account's parent in the account tree ("" for the root).
	Group string
	// Limits bound the account's work (limits.go).
	Limits Limits
}

// UserInfo is a user and its memberships (sorted).
type UserInfo struct {
	Name      string
	Accounts  []string
	CreatedAt ledger.Time
	// Unix is the Unix account the user's tasks run as; the zero value is
	// the account named like the user.
	Unix UnixIdentity
	// Limits bound the user's work (limits.go).
	Limits Limits
}

func (s *state) accountInfo(a *accountRecord) AccountInfo {
	return AccountInfo{
		Name: a.Name, Weight: s.weights[a.Name], WeightSource: s.weightFrom[a.Name],
		AdminWeight: clonePtr(a.AdminWeight), Contribution: clonePtr(a.Contribution),
		Contributed: s.named(s.contributedBy(a.Name)), CreatedAt: a.CreatedAt, Group: a.Group, Limits: a.Limits,
	}
}

func userInfo(u *userRecord) UserInfo {
	return UserInfo{Name: u.Name, Accounts: slices.Clone(u.Accounts), CreatedAt: u.CreatedAt, Unix: u.Unix.clone(), Limits: u.Limits}
}

// Account returns one account.
func (f *FSM) Account(name string) (AccountInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	a, ok := f.st.accounts[name]
	if !ok {
		return AccountInfo{}, notFound("account %q does not exist: check the name", name)
	}
	return f.st.accountInfo(a), nil
}

// Accounts lists accounts in name order after the name after.
func (f *FSM) Accounts(after string, limit int) (accounts []AccountInfo, next string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	names := f.st.accountNames
	i, found := slices.BinarySearch(names, after)
	if found {
		i++
	}
	limit = pageLimit(limit)
	for ; i < len(names) && len(accounts) < limit; i++ {
		accounts = append(accounts, f.st.accountInfo(f.st.accounts[names[i]]))
	}
	if i < len(names) && len(accounts) > 0 {
		next = accounts[len(accounts)-1].Name
	}
	return accounts, next
}

// User returns one user.
func (f *FSM) User(name string) (UserInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	u, ok := f.st.users[name]
	if !ok {
		return UserInfo{}, notFound("user %q does not exist: check the name", name)
	}
	return userInfo(u), nil
}

// Users lists users in name order after the name after; account, if not
// empty, keeps only its members.
func (f *FSM) Users(account, after string, limit int) (users []UserInfo, next string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	limit = pageLimit(limit)
	names := sortedKeys(f.st.users)
	i, found := slices.BinarySearch(names, after)
	if found {
		i++
	}
	for ; i < len(names); i++ {
		u := f.st.users[names[i]]
		if account != "" {
			if _, member := slices.BinarySearch(u.Accounts, account); !member {
				continue
			}
		}
		if len(users) == limit {
			next = users[len(users)-1].Name
			break
		}
		users = append(users, userInfo(u))
	}
	return users, next
}
