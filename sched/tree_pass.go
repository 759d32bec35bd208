package sched

import "github.com/longfair/longfair/ledger"

// treePass is the pass of hdrf and dff (DFF Algorithm 3, dynamic H-DRF):
// starting at the root, repeatedly step to the child with the least key
// among those that can still be scheduled, down to an account, and place
// that account's next task; then update what the ancestors hold and their
// keys, and start again at the root. An account whose next task fits on no
// node leaves the pass (it is blocked), and a group whose children are all
// blocked leaves its parent's candidates, so the resources its Fair
// Resource held go to its siblings. Starving accounts are served first, one
// task each, as under every other policy.
// It runs after prepare, which set up the node index, the accounts'
// cursors and running vectors, and ranked the starving accounts first in
// e.heap.
func (e *Engine) treePass(v *View) {
	t := &e.tree
	t.running = resize(t.running, len(v.Accounts))
	for a := range v.Accounts {
		t.running[a] = e.fair[a].running
	}
	t.setup(v, v.Settings.Policy, e.capacity, &e.fleet, func(a int) ledger.Vector { return e.treeHead(v, a) })
	for e.heap.len() > 0 {
		a := e.heap.top()
		if e.heap.keys[a].class != classStarving {
			break
		}
		e.heap.remove(a)
		if !t.nodes[t.leaf[a]].blocked {
			e.treePlace(v, a)
		}
	}
	for {
		leaf, ok := t.pick()
		if !ok {
			break
		}
		e.treePlace(v, int(t.nodes[leaf].account))
	}
}

// treeHead is account a's next pending task's demand in this pass, nil when
// it has none.
func (e *Engine) treeHead(v *View, a int) ledger.Vector {
	q := v.Accounts[a].Queue
	if c := e.cursor[a].job; c < len(q) {
		return q[c].Demand
	}
	return nil
}

// treePlace places account a's next task where the placement strategy
// says, or blocks the account when it fits on no node.
func (e *Engine) treePlace(v *View, a int) {
	t := &e.tree
	leaf := t.leaf[a]
	acct := &v.Accounts[a]
	cur := &e.cursor[a]
	job := &acct.Queue[cur.job]
	if !e.claim(a, job) {
		t.block(leaf)
		return
	}
	e.record(a, cur.job, job.FirstIndex+cur.placed)
	f := &e.fair[a]
	f.running.Add(job.Demand) // the leaf's used vector
	f.usage.AddScaled(job.Demand, v.Settings.Quantum.Seconds())
	moved := false
	if cur.placed++; cur.placed == job.Pending {
		cur.job, cur.placed = nextJob(acct.Queue, cur.job+1, &e.fleet), 0
		moved = true
	}
	t.placed(leaf, job.Demand, moved)
}

// pick walks from the root to the account that gets the next task, or
// reports that no account can be scheduled.
func (t *tree) pick() (int32, bool) {
	n := int32(treeRoot)
	for t.nodes[n].account < 0 {
		h := &t.nodes[n].heap
		if h.len() == 0 {
			return 0, false
		}
		n = t.nodes[n].children[h.top()]
	}
	return n, true
}

// placed records that leaf's account started a task of demand (its used
// vector already holds it; moved says its queue moved on to another job)
// and re-ranks everything that changed: the account and its ancestors, and
// the accounts whose next task no longer fits what is left.
func (t *tree) placed(leaf int32, demand ledger.Vector, moved bool) {
	for p := t.nodes[leaf].parent; p >= 0; p = t.nodes[p].parent {
		t.nodes[p].used.Add(demand)
	}
	t.free.Sub(demand)
	t.nodes[leaf].key = t.leafKey(leaf)
	if moved {
		t.watch(leaf)
	}
	t.justBlocked = t.justBlocked[:0]
	t.newlyBlocked(demand)
	if t.updateSaturation() || len(t.justBlocked) > refreshAfter {
		t.refresh()
		return
	}
	t.rerank(leaf)
	t.propagate(t.nodes[leaf].parent)
	for _, b := range t.justBlocked {
		t.rerank(b)
		t.propagate(t.nodes[b].parent)
	}
}

// refreshAfter is how many accounts one placement may block before
// re-ranking the whole tree is cheaper than re-ranking their ancestors.
const refreshAfter = 8

// block takes a leaf whose next task fits on no node out of the pass.
func (t *tree) block(leaf int32) {
	t.nodes[leaf].blocked = true
	t.rerank(leaf)
	t.propagate(t.nodes[leaf].parent)
}

// rerank puts node n's key into its parent's heap, or takes n out of it
// when it can no longer be scheduled.
func (t *tree) rerank(n int32) {
	nd := &t.nodes[n]
	p := &t.nodes[nd.parent]
	in := p.heap.pos[nd.slot] >= 0
	gone := nd.blocked || (nd.account < 0 && nd.heap.len() == 0)
	switch {
	case in && gone:
		p.heap.remove(int(nd.slot))
	case in:
		p.heap.update(int(nd.slot), t.rank(n))
	}
}

// propagate recomputes the keys of group n and its ancestors below the
// root, after a change among n's children.
func (t *tree) propagate(n int32) {
	for n > treeRoot {
		t.nodes[n].key = t.groupKey(n)
		t.rerank(n)
		n = t.nodes[n].parent
	}
}

// refresh re-ranks the whole tree bottom-up: saturation changed the
// resources H-DRF looks at, or many accounts were blocked at once.
func (t *tree) refresh() {
	for i := len(t.nodes) - 1; i > treeRoot; i-- {
		n := int32(i)
		if !t.isLeaf(n) {
			t.nodes[n].key = t.groupKey(n)
		}
		t.rerank(n)
	}
}

// treePolicy is the row of hdrf or dff: both run treePass over the account
// tree. They cap nobody: a blocked subtree's share goes to its siblings.
func treePolicy(p Policy) policyRow {
	return policyRow{
		name:    p,
		pass:    func(e *Engine, v *View) bool { e.treePass(v); return true },
		capFree: true,
		inexact: func(*Settings) bool { return true },
	}
}
