package sched

import "github.com/longfair/longfair/ledger"

// setup builds the pass's tree: shape and weights, what each subtree holds,
// the Fair Resources (dff), saturation, and the ranked candidates of every
// group. t.running[a] is account a's allocation and becomes its leaf's used
// vector (shared, not copied, so the pass's placements show in it); heads
// gives each account's next pending task. Jobs that the nodes of fl cannot
// hold take no part in the pass (nextJob), so they count in neither what an
// account needs nor the smallest demands.
func (t *tree) setup(v *View, policy Policy, capacity ledger.Vector, fl *fleet, heads func(a int) ledger.Vector) {
	n := len(v.Resources)
	t.policy, t.capacity, t.heads = policy, capacity, heads
	t.shape(v)
	t.normalizeWeights()
	for a := range v.Accounts {
		leaf := &t.nodes[t.leaf[a]]
		leaf.used = t.running[a]
	}
	// Bottom-up: what every group holds, and (in fair, for now) which
	// resources each node needs: a leaf needs a resource its running tasks
	// hold or a pending job demands; a group needs what any child needs.
	for i := len(t.nodes) - 1; i >= treeRoot; i-- {
		nd := &t.nodes[i]
		if nd.account >= 0 {
			t.leafNeeds(v, int(nd.account), fl, nd.fair)
		}
		if nd.parent < 0 {
			continue
		}
		p := &t.nodes[nd.parent]
		p.used.Add(nd.used)
		for j, x := range nd.fair {
			if x > 0 {
				p.fair[j] = 1
			}
		}
	}
	if policy == DFF {
		t.fairResources()
	}
	t.free = resize(t.free, n)
	clear(t.free)
	for i := range v.Nodes {
		t.free.Add(v.Nodes[i].Free)
	}
	t.smallest = resize(t.smallest, n)
	clear(t.smallest)
	for a := range v.Accounts {
		for _, job := range v.Accounts[a].Queue {
			if job.Pending <= 0 || !fl.holds(&job) {
				continue
			}
			for j, d := range job.Demand {
				if d > 0 && (t.smallest[j] == 0 || d < t.smallest[j]) {
					t.smallest[j] = d
				}
			}
		}
	}
	t.saturated = resize(t.saturated, n)
	clear(t.saturated)
	t.updateSaturation()
	t.needs = resize(t.needs, n)
	for j := range t.needs {
		t.needs[j] = t.needs[j][:0]
	}
	t.justBlocked = t.justBlocked[:0]
	// Bottom-up again: keys, and each group's candidates.
	for i := len(t.nodes) - 1; i >= treeRoot; i-- {
		id := int32(i)
		nd := &t.nodes[i]
		if nd.account >= 0 {
			t.watch(id)
			nd.key = t.leafKey(id)
			continue
		}
		nd.heap.reset(len(nd.children))
		for _, c := range nd.children {
			cn := &t.nodes[c]
			if (cn.account >= 0 && !cn.blocked) || (cn.account < 0 && cn.heap.len() > 0) {
				nd.heap.push(int(cn.slot), t.rank(c))
			}
		}
		if i != treeRoot {
			nd.key = t.groupKey(id)
		}
	}
}

// leafNeeds marks in need the resources account a needs.
func (t *tree) leafNeeds(v *View, a int, fl *fleet, need ledger.Vector) {
	acct := &v.Accounts[a]
	for j, x := range acct.Running {
		if x > 0 {
			need[j] = 1
		}
	}
	for _, job := range acct.Queue {
		if job.Pending <= 0 || !fl.holds(&job) {
			continue
		}
		for j, d := range job.Demand {
			if d > 0 {
				need[j] = 1
			}
		}
	}
}

// fairResources computes every node's Fair Resource top-down (DFF
// Algorithm 1, Formula 3): the root's is the cluster's capacity; a child
// that needs resource j gets its parent's FR_j times its weight over the
// total weight of the siblings that need j, and 0 of a resource it does not
// need. On entry fair holds the need marks; parents are rewritten before
// their children, whose marks are still there to be read.
func (t *tree) fairResources() {
	copy(t.nodes[treeRoot].fair, t.capacity)
	for i := range t.nodes {
		nd := &t.nodes[i]
		if nd.account >= 0 {
			continue
		}
		for j := range nd.fair {
			total, needing := 0.0, 0
			for _, c := range nd.children {
				if t.nodes[c].fair[j] > 0 {
					total += t.nodes[c].raw
					needing++
				}
			}
			for _, c := range nd.children {
				cn := &t.nodes[c]
				if cn.fair[j] > 0 {
					cn.fair[j] = nd.fair[j] * siblingWeight(cn.raw, total, needing)
				}
			}
		}
	}
}

// updateSaturation turns on the saturation of every resource the cluster
// can no longer give to any pending task; it reports whether one turned on.
func (t *tree) updateSaturation() bool {
	changed := false
	for j := range t.saturated {
		if !t.saturated[j] && t.smallest[j] > 0 && t.smallest[j] > t.free[j]+1e-9 {
			t.saturated[j] = true
			changed = true
		}
	}
	return changed
}

// rank is node n's key in its parent's heap.
func (t *tree) rank(n int32) rankKey {
	nd := &t.nodes[n]
	return rankKey{class: classNormal, a: nd.key, account: nd.order}
}
