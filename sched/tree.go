package sched

import (
	"fmt"
	"math"
	"strings"

	"github.com/longfair/longfair/ledger"
)

// The account tree of hdrf and dff: the root (the whole cluster), the groups
// of View.Groups and Account.Group (organisations, then groups within them),
// and the accounts as leaves. Resources flow down it: a node's share comes
// from its parent's, divided among siblings by weight, and what a node
// leaves unused goes to its siblings before anyone else.

// treeRoot is the root's index in tree.nodes.
const treeRoot = 0

// tree is one pass's account tree, Engine scratch rebuilt every pass.
// Children always have larger indices than their parents, so walking the
// nodes backwards visits every child before its parent.
type tree struct {
	policy   Policy
	nodes    []treeNode
	leaf     []int32 // account index → its leaf
	byPath   map[string]int32
	capacity ledger.Vector
	running  []ledger.Vector // account index → its allocation, the leaf's used vector
	// free is what the cluster has left. H-DRF leaves saturated resources
	// out of a group's dominant share: resource j is saturated once free_j
	// is below smallest_j, the smallest positive demand of j among the
	// jobs pending at the start of the pass, so that no pending task that
	// needs j can start any more. It only ever turns on within a pass.
	free, smallest ledger.Vector
	saturated      []bool
	// needs[j] ranks the unblocked accounts by their next task's demand of
	// resource j (tree_block.go); justBlocked collects the accounts the
	// last placement blocked.
	needs       []needHeap
	justBlocked []int32
	// heads returns account a's next pending task's demand, nil when it has
	// none left in this pass.
	heads func(a int) ledger.Vector
}

// treeNode is one node of the account tree.
type treeNode struct {
	parent  int32
	account int32 // the account's index for a leaf, −1 for a group
	slot    int32 // position among the parent's children
	order   int   // smallest account index below: a full tie goes to the account listed first
	raw     float64
	weight  float64 // raw weight normalized among the siblings (H-DRF)
	// children are the node's children; heap holds those that still ask
	// for resources in this pass and are not blocked, ranked by key.
	children []int32
	heap     rankHeap
	used     ledger.Vector // U: what the subtree holds; a leaf's aliases the engine's running vector
	own      ledger.Vector // a group's storage for used (a leaf's used is not its own)
	vec      ledger.Vector // H-DRF: the rescaled consumption vector (a leaf's is used)
	fair     ledger.Vector // DFF: the Fair Resource FR (Formula 3)
	blocked  bool          // leaf: its next task can no longer start in this pass
	key      float64       // H-DRF: weighted dominant share of vec; DFF: fairness f (Formula 6)
}

func (t *tree) isLeaf(n int32) bool { return t.nodes[n].account >= 0 }

// newNode appends a node, reusing the scratch of an earlier pass's node at
// that index. Pointers into t.nodes do not survive it.
func (t *tree) newNode(parent, account int32, raw float64, resources int) int32 {
	id := int32(len(t.nodes))
	if len(t.nodes) < cap(t.nodes) {
		t.nodes = t.nodes[:id+1]
	} else {
		t.nodes = append(t.nodes, treeNode{})
	}
	nd := &t.nodes[id]
	nd.parent, nd.account, nd.raw = parent, account, raw
	nd.children = nd.children[:0]
	nd.order = math.MaxInt
	nd.blocked = false
	nd.key = 0
	nd.vec = resize(nd.vec, resources)
	nd.fair = resize(nd.fair, resources)
	clear(nd.vec)
	clear(nd.fair)
	nd.used = nil
	if account < 0 {
		nd.own = resize(nd.own, resources)
		clear(nd.own)
		nd.used = nd.own
	}
	if parent >= 0 {
		p := &t.nodes[parent]
		nd.slot = int32(len(p.children))
		p.children = append(p.children, id)
	}
	return id
}

// group returns the node of a group path, creating it and its ancestors
// (with weight 1) when they do not exist yet.
func (t *tree) group(path string, resources int) int32 {
	if id, ok := t.byPath[path]; ok {
		return id
	}
	parent := int32(treeRoot)
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent = t.group(path[:i], resources)
	}
	id := t.newNode(parent, -1, 1, resources)
	t.byPath[path] = id
	return id
}

// shape lays out the tree of the view: root, groups, then one leaf per
// account, with the configured weights.
func (t *tree) shape(v *View) {
	n := len(v.Resources)
	t.nodes = t.nodes[:0]
	if t.byPath == nil {
		t.byPath = make(map[string]int32)
	}
	clear(t.byPath)
	t.newNode(-1, -1, 1, n)
	for _, g := range v.Groups {
		id := t.group(g.Path, n)
		t.nodes[id].raw = g.Weight
	}
	t.leaf = resize(t.leaf, len(v.Accounts))
	for a := range v.Accounts {
		parent := int32(treeRoot)
		if p := v.Accounts[a].Group; p != "" {
			parent = t.group(p, n)
		}
		t.leaf[a] = t.newNode(parent, int32(a), v.Accounts[a].Weight, n)
		t.nodes[t.leaf[a]].order = a
	}
	for i := len(t.nodes) - 1; i > treeRoot; i-- {
		nd := &t.nodes[i]
		p := &t.nodes[nd.parent]
		p.order = min(p.order, nd.order)
	}
}

// normalizeWeights sets every node's weight to its raw weight over its
// siblings' total, with the engine's rule for zero weights (see
// normalizedWeights): an account or group with no weight ranks after its
// weighted siblings, and when no sibling has one they count as equal.
func (t *tree) normalizeWeights() {
	for i := range t.nodes {
		nd := &t.nodes[i]
		if nd.account >= 0 || len(nd.children) == 0 {
			continue
		}
		total := 0.0
		for _, c := range nd.children {
			total += t.nodes[c].raw
		}
		for _, c := range nd.children {
			t.nodes[c].weight = siblingWeight(t.nodes[c].raw, total, len(nd.children))
		}
	}
}

// siblingWeight is one weight normalized by its siblings' total.
func siblingWeight(raw, total float64, siblings int) float64 {
	switch {
	case total <= 0:
		return 1 / float64(siblings)
	case raw <= 0:
		return zeroWeight
	default:
		return raw / total
	}
}

// ValidateGroupPath checks an account-tree group path: slash-separated,
// non-empty names ("org" or "org/group"). Admin commands that arrange
// accounts in the tree should call it before committing anything.
func ValidateGroupPath(path string) error {
	if path == "" {
		return fmt.Errorf("group path is empty: name the group, e.g. \"physics\" or \"physics/theory\"")
	}
	for rest := path; ; {
		name, tail, more := strings.Cut(rest, "/")
		if name == "" {
			return fmt.Errorf("group path %q has an empty name: separate names with single slashes and no slash at either end", path)
		}
		if strings.TrimSpace(name) != name {
			return fmt.Errorf("group path %q: name %q has leading or trailing spaces", path, name)
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

// validateTree checks the account tree of a view: well-formed group paths,
// each group listed once, finite non-negative weights.
func validateTree(v *View) error {
	seen := make(map[string]bool, len(v.Groups))
	for _, g := range v.Groups {
		if err := ValidateGroupPath(g.Path); err != nil {
			return err
		}
		if seen[g.Path] {
			return fmt.Errorf("group %q is listed twice: give each group one weight", g.Path)
		}
		seen[g.Path] = true
		if math.IsNaN(g.Weight) || math.IsInf(g.Weight, 0) || g.Weight < 0 {
			return fmt.Errorf("group %q has weight %v: weights must be finite and non-negative", g.Path, g.Weight)
		}
	}
	for i := range v.Accounts {
		a := &v.Accounts[i]
		if a.Group != "" {
			if err := ValidateGroupPath(a.Group); err != nil {
				return fmt.Errorf("account %q: %w", a.Name, err)
			}
		}
	}
	return nil
}
