package fsm

import (
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// The account tree of hdrf and dff (sched.View.Groups, Account.Group):
// groups are inner nodes named by their path from the root ("physics" or
// "physics/theory"), each with a weight among its siblings; accounts are
// the leaves, weighted by their effective weight among theirs. Every
// group's ancestors exist as groups too: commands that name a group create
// what is missing of its path with weight 1.

// Limits of the account tree.
const (
	// MaxGroupDepth is how many names a group path may have.
	MaxGroupDepth = 8
	// MaxGroups bounds the number of groups of a cluster.
	MaxGroups = 10_000
)

// SetGroupWeight creates a group of the account tree or changes its
// weight. Groups of its path that do not exist yet are created with
// weight 1.
type SetGroupWeight struct {
	Path   string  `json:"path"`
	Weight float64 `json:"weight"`
}

// RemoveGroup removes a group that holds no account and no group.
type RemoveGroup struct {
	Path string `json:"path"`
}

// SetAccountGroup moves an account into a group (created with weight 1,
// with the rest of its path, if it does not exist), or back under the root
// when Group is empty.
type SetAccountGroup struct {
	Account string `json:"account"`
	Group   string `json:"group,omitempty"`
}

func (*SetGroupWeight) Type() CommandType  { return TypeSetGroupWeight }
func (*RemoveGroup) Type() CommandType     { return TypeRemoveGroup }
func (*SetAccountGroup) Type() CommandType { return TypeSetAccountGroup }

func (c *SetGroupWeight) validate(r rules) *Error {
	if err := checkGroupPath("group path", c.Path); err != nil {
		return err
	}
	return checkQuantity("group weight", c.Weight)
}

func (c *RemoveGroup) validate(r rules) *Error { return checkGroupPath("group path", c.Path) }

func (c *SetAccountGroup) validate(r rules) *Error {
	if err := checkName("account name", c.Account); err != nil {
		return err
	}
	if c.Group == "" {
		return nil
	}
	return checkGroupPath("group path", c.Group)
}

// checkGroupPath refuses a group path that the engine would not take
// (sched.ValidateGroupPath), or whose names are not plain names, or that
// is deeper than MaxGroupDepth.
func checkGroupPath(field, path string) *Error {
	if err := sched.ValidateGroupPath(path); err != nil {
		return invalid("%s: %v", field, err)
	}
	names := strings.Split(path, "/")
	if len(names) > MaxGroupDepth {
		return invalid("%s %q has %d levels: a group path has at most %d", field, path, len(names), MaxGroupDepth)
	}
	for _, n := range names {
		if err := checkName(field+" element", n); err != nil {
			return err
		}
	}
	return nil
}

// bucketGroups holds the groups of the account tree by path.
var bucketGroups = []byte("account_groups")

// groupRecord is a group of the account tree as stored.
type groupRecord struct {
	Path      string      `json:"path"`
	Weight    float64     `json:"weight"`
	CreatedAt ledger.Time `json:"created_at"`
}

// GroupInfo is a group of the account tree.
type GroupInfo struct {
	Path   string
	Weight float64
	// Accounts and Groups are the group's direct children, by name.
	Accounts  []string
	Groups    []string
	CreatedAt ledger.Time
}

// setGroupWeight applies SetGroupWeight; the result is a GroupInfo.
func (b *batch) setGroupWeight(c *SetGroupWeight, t ledger.Time) (any, error) {
	st := b.st
	created, err := st.groups.plan(st, c.Path)
	if err != nil {
		return nil, err
	}
	rec := &groupRecord{Path: c.Path, Weight: c.Weight, CreatedAt: t}
	if old, ok := st.groups.byPath[c.Path]; ok {
		rec.CreatedAt = old.CreatedAt
	}
	if err := b.createGroups(created, t); err != nil {
		return nil, err
	}
	if err := b.putGroup(rec); err != nil {
		return nil, err
	}
	return st.groupInfo(rec), nil
}

// removeGroup applies RemoveGroup; the result is the removed GroupInfo.
func (b *batch) removeGroup(c *RemoveGroup) (any, error) {
	st := b.st
	rec, ok := st.groups.byPath[c.Path]
	if !ok {
		return nil, notFound("group %q does not exist: list the groups with 'longfair group list'", c.Path)
	}
	info := st.groupInfo(rec)
	if len(info.Accounts) > 0 {
		return nil, refuse(KindPrecondition, "group %q still holds accounts %s: move them elsewhere first (longfair account set-group)",
			c.Path, strings.Join(info.Accounts, ", "))
	}
	if len(info.Groups) > 0 {
		return nil, refuse(KindPrecondition, "group %q still holds groups %s: remove them first", c.Path, strings.Join(info.Groups, ", "))
	}
	if err := b.bucket(bucketGroups).Delete([]byte(c.Path)); err != nil {
		return nil, err
	}
	delete(st.groups.byPath, c.Path)
	return info, nil
}

// setAccountGroup applies SetAccountGroup; the result is an AccountInfo.
func (b *batch) setAccountGroup(c *SetAccountGroup, t ledger.Time) (any, error) {
	st := b.st
	old, ok := st.accounts[c.Account]
	if !ok {
		return nil, notFound("account %q does not exist: check the name, or create it first", c.Account)
	}
	var created []string
	if c.Group != "" {
		if _, clash := st.groups.byPath[c.Group+"/"+c.Account]; clash {
			return nil, refuse(KindPrecondition, "group %q holds a group named %q: an account and a group under one parent need different names",
				c.Group, c.Account)
		}
		var err error
		if created, err = st.groups.plan(st, c.Group); err != nil {
			return nil, err
		}
	}
	if err := b.createGroups(created, t); err != nil {
		return nil, err
	}
	a := *old
	a.Group = c.Group
	if err := putJSON(b.bucket(bucketAccounts), []byte(a.Name), &a); err != nil {
		return nil, err
	}
	st.accounts[a.Name] = &a
	return st.accountInfo(&a), nil
}

// createGroups stores new groups of weight 1.
func (b *batch) createGroups(paths []string, t ledger.Time) error {
	for _, p := range paths {
		if err := b.putGroup(&groupRecord{Path: p, Weight: 1, CreatedAt: t}); err != nil {
			return err
		}
	}
	return nil
}

func (b *batch) putGroup(rec *groupRecord) error {
	if err := putJSON(b.bucket(bucketGroups), []byte(rec.Path), rec); err != nil {
		return err
	}
	b.st.groups.byPath[rec.Path] = rec
	return nil
}

// groupInfo describes a group with its direct children.
func (s *state) groupInfo(rec *groupRecord) GroupInfo {
	info := GroupInfo{Path: rec.Path, Weight: rec.Weight, CreatedAt: rec.CreatedAt, Accounts: []string{}, Groups: []string{}}
	for _, name := range s.accountNames {
		if s.accounts[name].Group == rec.Path {
			info.Accounts = append(info.Accounts, name)
		}
	}
	prefix := rec.Path + "/"
	for _, p := range sortedKeys(s.groups.byPath) {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !strings.Contains(rest, "/") {
			info.Groups = append(info.Groups, rest)
		}
	}
	return info
}

// Groups lists the groups of the account tree by path.
func (f *FSM) Groups() []GroupInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.st
	paths := sortedKeys(st.groups.byPath)
	out := make([]GroupInfo, len(paths))
	at := make(map[string]int, len(paths))
	for i, p := range paths {
		rec := st.groups.byPath[p]
		out[i] = GroupInfo{Path: p, Weight: rec.Weight, CreatedAt: rec.CreatedAt, Accounts: []string{}, Groups: []string{}}
		at[p] = i
	}
	// One pass over the accounts and one over the groups, in name order,
	// fills in every group's children.
	for _, name := range st.accountNames {
		if i, ok := at[st.accounts[name].Group]; ok {
			out[i].Accounts = append(out[i].Accounts, name)
		}
	}
	for _, p := range paths {
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			if i, ok := at[p[:j]]; ok {
				out[i].Groups = append(out[i].Groups, p[j+1:])
			}
		}
	}
	return out
}

// AccountTree lays out the account tree as the fairness report shows it
// (sched.AccountTree) at time now, with the cluster's resource names for
// the tree's vectors.
func (f *FSM) AccountTree(now ledger.Time) ([]sched.TreeNode, []string, error) {
	v := f.View(now)
	nodes, err := sched.AccountTree(v)
	if err != nil {
		return nil, nil, refuse(KindInternal, "account tree: %v", err)
	}
	return nodes, v.Resources, nil
}

// viewGroups lists the groups for a scheduling view, by path.
func (s *state) viewGroups() []sched.Group {
	if len(s.groups.byPath) == 0 {
		return nil
	}
	out := make([]sched.Group, 0, len(s.groups.byPath))
	for _, p := range sortedKeys(s.groups.byPath) {
		out = append(out, sched.Group{Path: p, Weight: s.groups.byPath[p].Weight})
	}
	return out
}

// groupState is the account tree's groups in memory.
type groupState struct {
	byPath map[string]*groupRecord
}

// plan checks that path can be a group and returns the groups of its path,
// from the root down, that do not exist yet. A group may not share its
// name with an account under the same parent.
func (g *groupState) plan(s *state, path string) ([]string, error) {
	var missing []string
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		p := path[:i]
		if _, ok := g.byPath[p]; ok {
			continue
		}
		parent, name := "", p
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			parent, name = p[:j], p[j+1:]
		}
		if a, ok := s.accounts[name]; ok && a.Group == parent {
			where := "the root"
			if parent != "" {
				where = "group " + parent
			}
			return nil, refuse(KindPrecondition, "account %q is under %s: a group there cannot have the same name; pick another name", name, where)
		}
		missing = append(missing, p)
	}
	if len(g.byPath)+len(missing) > MaxGroups {
		return nil, refuse(KindPrecondition, "the cluster has %d groups, and %d more would pass the limit of %d: remove unused groups first",
			len(g.byPath), len(missing), MaxGroups)
	}
	return missing, nil
}

// load reads every group.
func (g *groupState) load(tx *bolt.Tx) error {
	g.byPath = make(map[string]*groupRecord)
	b := tx.Bucket(bucketGroups)
	if b == nil {
		return nil
	}
	return forEachJSON(b, func(_ []byte, r *groupRecord) { g.byPath[r.Path] = r })
}
