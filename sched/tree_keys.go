package sched

import "math"

// leafKey is an account's rank among its siblings: its weighted dominant
// share under hdrf (exactly drf's key), its fairness under dff.
func (t *tree) leafKey(n int32) float64 {
	nd := &t.nodes[n]
	if t.policy == DFF {
		return dffFairness(nd)
	}
	return dominantShare(nd.used, t.capacity, nd.weight)
}

// groupKey is a group's rank among its siblings, from its children.
func (t *tree) groupKey(n int32) float64 {
	if t.policy == DFF {
		return t.dffGroupFairness(n)
	}
	return t.hdrfGroupShare(n)
}

// dffFairness is Formula 6: f_i = max_j u_ij / fr_ij over the resources the
// node has a Fair Resource of. (A node holds only resources it needs, and it
// has a Fair Resource of every resource it needs that the cluster has.)
func dffFairness(nd *treeNode) float64 {
	f := 0.0
	for j, fr := range nd.fair {
		if fr > 0 {
			f = math.Max(f, nd.used[j]/fr)
		}
	}
	return f
}

// dffGroupFairness is Algorithm 2 for a group: its fairness from what its
// whole subtree holds; but when that is over 1 (it holds more than its Fair
// Resource, which happens when a blocked sibling's unused Fair Resource was
// shared with it) and a child that can still be scheduled is less served,
// the group takes that child's fairness, so that the child's new demands are
// not held back by what its siblings borrowed.
func (t *tree) dffGroupFairness(n int32) float64 {
	nd := &t.nodes[n]
	f := dffFairness(nd)
	if f > 1 && nd.heap.len() > 0 {
		if least := nd.heap.keys[nd.heap.top()].a; least < f {
			f = least
		}
	}
	return f
}

// hdrfGroupShare is dynamic H-DRF for a group. Every child that can still be
// scheduled has its consumption vector rescaled so that its weighted
// dominant share equals the least among them, M; blocked and idle children
// count with their vectors as they are; the sum is the group's vector. Its
// weighted dominant share, over the resources that are not saturated, is
// the group's key. Rescaling keeps a child that holds much of a resource
// nobody else wants from making its group look rich, which would starve the
// group's other children.
func (t *tree) hdrfGroupShare(n int32) float64 {
	nd := &t.nodes[n]
	clear(nd.vec)
	least := 0.0
	if nd.heap.len() > 0 {
		least = nd.heap.keys[nd.heap.top()].a
	}
	for _, c := range nd.children {
		cn := &t.nodes[c]
		v := cn.vec
		if cn.account >= 0 {
			v = cn.used
		}
		if nd.heap.pos[cn.slot] < 0 {
			nd.vec.Add(v)
		} else if cn.key > 0 {
			nd.vec.AddScaled(v, least/cn.key)
		}
	}
	s := 0.0
	for j := range nd.vec {
		if !t.saturated[j] {
			s = math.Max(s, share(nd.vec, t.capacity, nd.weight, j))
		}
	}
	return s
}
