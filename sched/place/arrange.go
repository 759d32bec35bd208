package place

import "math/bits"

// widestSample is how many nodes widest looks at to choose a split.
const widestSample = 128

// arrange chooses which leaf slot each node gets, like a k-d tree: the nodes
// of every subtree are split in half at the median of the resource whose
// normalized free quantity varies most among them. A subtree then holds nodes
// with similar free vectors, so its max and min vectors are close to every
// node in it and the search's bounds prune well. The layout only affects
// speed: which node Best returns depends on the nodes alone.
func (x *Index) arrange() {
	k := x.k
	x.bySlot = grow(x.bySlot, x.leaves)
	x.slot = grow(x.slot, x.n)
	x.order = grow(x.order, x.n)
	// points[i*k:i*k+k] is order[i]'s normalized free vector; the two move
	// together, so every split scans memory in sequence.
	x.points = grow(x.points, x.n*k)
	x.span = grow(x.span, 2*k)
	for v := range x.order {
		x.order[v] = int32(v)
		for j, f := range x.nodeFree[v*k : v*k+k] {
			x.points[v*k+j] = f * x.inv[j]
		}
	}
	x.split(x.order, x.points, x.bySlot)
	for p, node := range x.bySlot {
		if node >= 0 {
			x.slot[node] = int32(p)
		}
	}
}

// split places nodes (with their points) into slots, a subtree's
// power-of-two run of leaf slots, filling the slots nodes do not use with -1.
func (x *Index) split(nodes []int32, points []float64, slots []int32) {
	k := x.k
	for len(slots) > 1 && len(nodes) > 0 {
		half := len(slots) / 2
		left := (len(nodes) + 1) / 2
		selectNth(nodes, points, k, x.widest(points), left)
		x.split(nodes[:left], points[:left*k], slots[:half])
		nodes, points, slots = nodes[left:], points[left*k:], slots[half:]
	}
	for p := range slots {
		slots[p] = -1
		if p < len(nodes) {
			slots[p] = nodes[p]
		}
	}
}

// widest returns the resource whose normalized free quantity spans the widest
// range among points (k per node), or -1 when they are all equal. Large sets
// are judged by an even sample: the choice only steers the layout.
func (x *Index) widest(points []float64) int {
	k := x.k
	if k == 0 {
		return -1
	}
	lo, hi := x.span[:k], x.span[k:2*k]
	copy(lo, points[:k])
	copy(hi, lo)
	n := len(points) / k
	step := max(1, n/widestSample)
	for i := step; i < n; i += step {
		for j, f := range points[i*k : i*k+k] {
			lo[j], hi[j] = min(lo[j], f), max(hi[j], f)
		}
	}
	best, bestSpan := -1, 0.0
	for j := range k {
		if s := hi[j] - lo[j]; s > bestSpan {
			best, bestSpan = j, s
		}
	}
	return best
}

// selectNth reorders nodes and their points (k per node) so that the first
// nth come before the rest in the order of resource j (all equal when j < 0)
// and then of node index: quickselect. Ordering equal vectors by index keeps
// each group of identical nodes in index order across the leaves, so as the
// lowest-indexed of them are filled first, the filled ones and the idle ones
// occupy separate subtrees and the search's tie test prunes the idle ones.
func selectNth(nodes []int32, points []float64, k, j, nth int) {
	j = max(j, 0) // all equal: any resource orders them by index alone
	swap := func(a, b int) {
		nodes[a], nodes[b] = nodes[b], nodes[a]
		pa, pb := points[a*k:a*k+k], points[b*k:b*k+k]
		for i := range pa {
			pa[i], pb[i] = pb[i], pa[i]
		}
	}
	lo, hi := 0, len(nodes) // the split point lies in [lo, hi)
	for hi-lo > 1 {
		// Median of three to hi-1 as the pivot, then Lomuto.
		mid := lo + (hi-lo)/2
		if before(points[mid*k+j], nodes[mid], points[lo*k+j], nodes[lo]) {
			swap(mid, lo)
		}
		if before(points[(hi-1)*k+j], nodes[hi-1], points[lo*k+j], nodes[lo]) {
			swap(hi-1, lo)
		}
		if before(points[mid*k+j], nodes[mid], points[(hi-1)*k+j], nodes[hi-1]) {
			swap(mid, hi-1)
		}
		pv, pn := points[(hi-1)*k+j], nodes[hi-1]
		p := lo
		for i := lo; i < hi-1; i++ {
			if before(points[i*k+j], nodes[i], pv, pn) {
				if i != p {
					swap(p, i)
				}
				p++
			}
		}
		swap(p, hi-1)
		switch {
		case nth < p:
			hi = p
		case nth > p:
			lo = p + 1
		default:
			return
		}
	}
}

// before orders nodes by a quantity, then by index.
func before(va float64, na int32, vb float64, nb int32) bool {
	return va < vb || va == vb && na < nb
}

// Relayout. Take changes free vectors after arrange placed the nodes, so a
// layout that grouped similar nodes drifts (a node that was idle is now full
// amid idle ones) and the search visits more of the tree. When searches have
// together visited as many tree nodes as a new layout costs, and visited far
// more per search than a tight layout needs, the nodes are arranged afresh
// from their current free vectors. Answers do not change; only speed.
const (
	// relayoutBudget is the visits, per leaf slot, that pay for a layout,
	// measured: a layout costs ~450 ns per node (BenchmarkReset), a visit
	// 20–30 ns.
	relayoutBudget = 24
	// relayoutDepths is how many tree depths of visits per search count
	// as a loose layout.
	relayoutDepths = 4
)

// noteSearch counts one search's visits and rearranges the nodes when the
// layout has become loose.
func (x *Index) noteSearch(visits int) {
	x.searched++
	x.visited += visits
	if x.visited < relayoutBudget*x.leaves {
		return
	}
	depth := bits.Len(uint(x.leaves))
	if x.visited >= x.searched*relayoutDepths*depth {
		x.relayout()
	}
	x.searched, x.visited = 0, 0
}

// relayout arranges the nodes afresh from their current free vectors.
func (x *Index) relayout() { x.layout() }
