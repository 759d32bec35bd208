package sched

import (
	"math"
	"strings"

	"github.com/longfair/longfair/ledger"
)

// refTree is a brute-force reference for hdrf and dff, written from the
// papers' definitions and sharing no code with the engine's tree: before
// every placement it recomputes every key from scratch, recursively, and it
// blocks an account as soon as its next task exceeds what the cluster has
// left. It works on a one-node cluster (so fitting the totals is fitting a
// node) and returns the accounts in the order they got tasks.
type refTree struct {
	policy    Policy
	capacity  ledger.Vector
	free      ledger.Vector
	smallest  ledger.Vector
	children  map[string][]string // path → child paths ("" is the root); accounts are "\x00<index>"
	weight    map[string]float64
	accounts  []Account
	used      []ledger.Vector
	queue     [][]Job
	fair      map[string]ledger.Vector
	needs     map[string]ledger.Vector
	blocked   []bool
	saturated []bool
}

func refLeaf(a int) string { return "\x00" + string(rune('0'+a)) }

func (r *refTree) isLeaf(p string) bool { return strings.HasPrefix(p, "\x00") }
func (r *refTree) account(p string) int { return int(p[1] - '0') }

func newRefTree(v *View) *refTree {
	r := &refTree{
		policy: v.Settings.Policy, children: map[string][]string{}, weight: map[string]float64{},
		fair: map[string]ledger.Vector{}, needs: map[string]ledger.Vector{},
	}
	n := len(v.Resources)
	r.capacity, r.free, r.smallest = ledger.NewVector(n), ledger.NewVector(n), ledger.NewVector(n)
	for _, nd := range v.Nodes {
		r.capacity.Add(nd.Capacity)
		r.free.Add(nd.Free)
	}
	var addGroup func(p string)
	addGroup = func(p string) {
		if _, ok := r.weight[p]; ok || p == "" {
			return
		}
		parent := ""
		if i := strings.LastIndex(p, "/"); i >= 0 {
			parent = p[:i]
		}
		addGroup(parent)
		r.weight[p] = 1
		r.children[parent] = append(r.children[parent], p)
	}
	for _, g := range v.Groups {
		addGroup(g.Path)
		r.weight[g.Path] = g.Weight
	}
	for a, acct := range v.Accounts {
		addGroup(acct.Group)
		r.children[acct.Group] = append(r.children[acct.Group], refLeaf(a))
		r.weight[refLeaf(a)] = acct.Weight
		r.accounts = append(r.accounts, acct)
		r.used = append(r.used, acct.Running.Clone())
		q := append([]Job(nil), acct.Queue...)
		for i := range q {
			if !someNodeHolds(v, q[i].Demand) {
				q[i].Pending = 0 // too big for every node: not part of the pass
			}
		}
		r.queue = append(r.queue, q)
		for _, j := range q {
			for k, d := range j.Demand {
				if j.Pending > 0 && d > 0 && (r.smallest[k] == 0 || d < r.smallest[k]) {
					r.smallest[k] = d
				}
			}
		}
	}
	r.blocked = make([]bool, len(v.Accounts))
	r.saturated = make([]bool, n)
	r.computeNeeds("")
	r.fair[""] = r.capacity.Clone()
	r.computeFair("")
	return r
}

func (r *refTree) head(a int) ledger.Vector {
	for _, j := range r.queue[a] {
		if j.Pending > 0 {
			return j.Demand
		}
	}
	return nil
}

// computeNeeds marks what every node needs: a leaf what it runs and what
// its pending jobs demand, a group what its children need.
func (r *refTree) computeNeeds(p string) ledger.Vector {
	need := ledger.NewVector(len(r.capacity))
	if r.isLeaf(p) {
		a := r.account(p)
		for k, x := range r.accounts[a].Running {
			if x > 0 {
				need[k] = 1
			}
		}
		for _, j := range r.queue[a] {
			for k, d := range j.Demand {
				if j.Pending > 0 && d > 0 {
					need[k] = 1
				}
			}
		}
	} else {
		for _, c := range r.children[p] {
			for k, x := range r.computeNeeds(c) {
				if x > 0 {
					need[k] = 1
				}
			}
		}
	}
	r.needs[p] = need
	return need
}

// computeFair is Algorithm 1 (UpdateFR).
func (r *refTree) computeFair(p string) {
	for _, c := range r.children[p] {
		fr := ledger.NewVector(len(r.capacity))
		for k := range fr {
			if r.needs[c][k] == 0 {
				continue
			}
			total, count := 0.0, 0
			for _, s := range r.children[p] {
				if r.needs[s][k] > 0 {
					total += r.weight[s]
					count++
				}
			}
			fr[k] = r.fair[p][k] * refNormalize(r.weight[c], total, count)
		}
		r.fair[c] = fr
		r.computeFair(c)
	}
}

func refNormalize(w, total float64, count int) float64 {
	switch {
	case total <= 0:
		return 1 / float64(count)
	case w <= 0:
		return 1e-9
	}
	return w / total
}

// siblingShare is a node's weight normalized over all its siblings.
func (r *refTree) siblingShare(p string) float64 {
	parent := ""
	if !r.isLeaf(p) {
		if i := strings.LastIndex(p, "/"); i >= 0 {
			parent = p[:i]
		}
	} else {
		parent = r.accounts[r.account(p)].Group
	}
	total := 0.0
	for _, s := range r.children[parent] {
		total += r.weight[s]
	}
	return refNormalize(r.weight[p], total, len(r.children[parent]))
}

// schedulable is Y(A(·)): the node has a leaf below with a next task that
// fits what is left.
func (r *refTree) schedulable(p string) bool {
	if r.isLeaf(p) {
		a := r.account(p)
		return !r.blocked[a] && r.head(a) != nil
	}
	for _, c := range r.children[p] {
		if r.schedulable(c) {
			return true
		}
	}
	return false
}

func (r *refTree) usedOf(p string) ledger.Vector {
	if r.isLeaf(p) {
		return r.used[r.account(p)]
	}
	u := ledger.NewVector(len(r.capacity))
	for _, c := range r.children[p] {
		u.Add(r.usedOf(c))
	}
	return u
}

// hdrf returns a node's (rescaled) consumption vector and weighted
// dominant share.
func (r *refTree) hdrf(p string) (ledger.Vector, float64) {
	w := r.siblingShare(p)
	if r.isLeaf(p) {
		u := r.used[r.account(p)]
		s := 0.0
		for k := range u {
			if r.capacity[k] > 0 {
				s = math.Max(s, u[k]/(r.capacity[k]*w))
			}
		}
		return u, s
	}
	type child struct {
		vec   ledger.Vector
		share float64
		sched bool
	}
	var cs []child
	least := math.Inf(1)
	for _, c := range r.children[p] {
		vec, s := r.hdrf(c)
		sched := r.schedulable(c)
		cs = append(cs, child{vec, s, sched})
		if sched {
			least = math.Min(least, s)
		}
	}
	sum := ledger.NewVector(len(r.capacity))
	for _, c := range cs {
		switch {
		case !c.sched:
			sum.Add(c.vec)
		case c.share > 0:
			sum.AddScaled(c.vec, least/c.share)
		}
	}
	s := 0.0
	for k := range sum {
		if !r.saturated[k] && r.capacity[k] > 0 {
			s = math.Max(s, sum[k]/(r.capacity[k]*w))
		}
	}
	return sum, s
}

// dff is Algorithm 2 (UpdateF) for one node.
func (r *refTree) dff(p string) float64 {
	u := r.usedOf(p)
	f := 0.0
	for k, fr := range r.fair[p] {
		if fr > 0 {
			f = math.Max(f, u[k]/fr)
		}
	}
	if r.isLeaf(p) || f <= 1 {
		return f
	}
	least := math.Inf(1)
	for _, c := range r.children[p] {
		if r.schedulable(c) {
			least = math.Min(least, r.dff(c))
		}
	}
	return math.Min(f, least)
}

func (r *refTree) key(p string) float64 {
	if r.policy == DFF {
		return r.dff(p)
	}
	_, s := r.hdrf(p)
	return s
}

// order is the smallest account index below a node.
func (r *refTree) order(p string) int {
	if r.isLeaf(p) {
		return r.account(p)
	}
	o := math.MaxInt
	for _, c := range r.children[p] {
		o = min(o, r.order(c))
	}
	return o
}

// run fills the cluster and returns the accounts in placement order.
func (r *refTree) run() []int {
	got := []int{}
	for {
		for a := range r.accounts {
			if h := r.head(a); h != nil && !r.free.Fits(h) {
				r.blocked[a] = true
			}
		}
		for k := range r.saturated {
			if r.smallest[k] > 0 && r.smallest[k] > r.free[k]+1e-9 {
				r.saturated[k] = true
			}
		}
		if !r.schedulable("") {
			return got
		}
		p := ""
		for !r.isLeaf(p) {
			best, bestKey, bestOrder := "", math.Inf(1), math.MaxInt
			for _, c := range r.children[p] {
				if !r.schedulable(c) {
					continue
				}
				k, o := r.key(c), r.order(c)
				if best == "" || k < bestKey || (k == bestKey && o < bestOrder) {
					best, bestKey, bestOrder = c, k, o
				}
			}
			p = best
		}
		a := r.account(p)
		for i := range r.queue[a] {
			if j := &r.queue[a][i]; j.Pending > 0 {
				r.used[a].Add(j.Demand)
				r.free.Sub(j.Demand)
				j.Pending--
				break
			}
		}
		got = append(got, a)
	}
}
