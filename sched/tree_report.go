package sched

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/longfair/longfair/ledger"
)

// TreeNode is one node of the account tree as the fairness report shows it:
// what the subtree holds, what DFF says it should hold, and how each of the
// two hierarchical policies ranks it among its siblings.
type TreeNode struct {
	// Path is the node's path from the root: "" for the root, "org/group"
	// for a group, "org/group/account" for an account.
	Path string
	// Name is the last element of Path ("" for the root).
	Name string
	// Depth is 0 for the root, 1 for its children, and so on.
	Depth int
	// Account indexes View.Accounts for an account, −1 for the root and
	// the groups.
	Account int
	// Weight is the configured weight; Share is it over the siblings'
	// total (1 for the root).
	Weight, Share float64
	// Running is U: what the subtree's running tasks hold.
	Running ledger.Vector
	// FairResource is DFF's Fair Resource FR (Algorithm 1): what the node
	// should get of each resource, given which of its siblings need it.
	FairResource ledger.Vector
	// Fairness is DFF's f (Algorithm 2): its largest ratio of held to Fair
	// Resource, so below 1 it holds less than its fair share.
	Fairness float64
	// DominantShare is H-DRF's key: the weighted dominant share of its
	// rescaled consumption vector.
	DominantShare float64
}

// AccountTree lays out the view's account tree for a fairness report:
// depth first from the root, siblings by name. It computes every node's
// DFF Fair Resource and fairness and its H-DRF dominant share from the
// accounts' running tasks and pending jobs, as the next pass would begin.
func AccountTree(v *View) ([]TreeNode, error) {
	if err := validateView(v); err != nil {
		return nil, err
	}
	capacity := ledger.NewVector(len(v.Resources))
	caps := make([]ledger.Vector, len(v.Nodes))
	for i := range v.Nodes {
		capacity.Add(v.Nodes[i].Capacity)
		caps[i] = v.Nodes[i].Capacity
	}
	var fl fleet
	fl.reset(caps)
	heads := func(a int) ledger.Vector {
		q := v.Accounts[a].Queue
		if k := nextJob(q, 0, &fl); k < len(q) {
			return q[k].Demand
		}
		return nil
	}
	running := make([]ledger.Vector, len(v.Accounts))
	for a := range v.Accounts {
		running[a] = v.Accounts[a].Running.Clone()
	}
	var dff, hdrf tree
	dff.running, hdrf.running = running, running
	dff.setup(v, DFF, capacity, &fl, heads)
	hdrf.setup(v, HDRF, capacity, &fl, heads)

	names := make([]string, len(dff.nodes))
	for path, id := range dff.byPath {
		names[id] = path
	}
	for a, leaf := range dff.leaf {
		names[leaf] = v.Accounts[a].Name
	}
	var out []TreeNode
	var walk func(id int32, path string, depth int)
	walk = func(id int32, path string, depth int) {
		nd := &dff.nodes[id]
		tn := TreeNode{
			Path: path, Depth: depth, Account: int(nd.account), Weight: nd.raw, Share: nd.weight,
			Running: nd.used.Clone(), FairResource: nd.fair.Clone(),
			Fairness: nd.key, DominantShare: hdrf.nodes[id].key,
		}
		if id == treeRoot {
			tn.Weight, tn.Share, tn.FairResource = 1, 1, capacity.Clone()
			tn.Fairness = dffFairness(&treeNode{used: nd.used, fair: capacity})
			tn.DominantShare = dominantShare(nd.used, capacity, 1)
		} else {
			tn.Name = childName(names, &dff, id)
		}
		out = append(out, tn)
		kids := slices.Clone(nd.children)
		slices.SortStableFunc(kids, func(x, y int32) int { return cmp.Compare(childName(names, &dff, x), childName(names, &dff, y)) })
		for _, c := range kids {
			cp := childName(names, &dff, c)
			if path != "" {
				cp = path + "/" + cp
			}
			walk(c, cp, depth+1)
		}
	}
	walk(treeRoot, "", 0)
	if len(out) != len(dff.nodes) {
		return nil, fmt.Errorf("account tree: laid out %d of %d nodes", len(out), len(dff.nodes))
	}
	return out, nil
}

// childName is a node's own name: an account's name, a group's last path
// element.
func childName(names []string, t *tree, id int32) string {
	n := names[id]
	if t.nodes[id].account >= 0 {
		return n
	}
	for i := len(n) - 1; i >= 0; i-- {
		if n[i] == '/' {
			return n[i+1:]
		}
	}
	return n
}
