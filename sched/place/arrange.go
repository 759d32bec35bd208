package place

import "math/bits"

// widestSample is how many nodes widest looks at to choose a split.
const widestSample = 128

// arrange chooses which leaf slot each group of twins gets, like a k-d
// tree: the groups of every subtree are split in half at the median of the
// resource whose normalized free quantity varies most among them. A subtree
// then holds similar free vectors, so its max and min vectors are close to
// every group in it and the search's bounds prune well. The slots no group
// gets are spread through the tree and kept for groups that gain their first
// member later. The layout only affects speed: which node Best returns
// depends on the nodes alone.
func (x *Index) arrange(groups []int32) {
	k := x.k
	x.bySlot = grow(x.bySlot, x.leaves)
	// points[i*k:i*k+k] is groups[i]'s normalized free vector; the two move
	// together, so every split scans memory in sequence.
	x.points = grow(x.points, len(groups)*k)
	x.span = grow(x.span, 2*k)
	for i, g := range groups {
		for j, f := range x.groupVector(g) {
			x.points[i*k+j] = f * x.inv[j]
		}
	}
	x.split(groups, x.points, x.bySlot)
	for p, g := range x.bySlot {
		if g >= 0 {
			x.twins.slotOf[g] = int32(p)
		} else {
			x.freeSlots = append(x.freeSlots, int32(p))
		}
	}
}

// split places groups (nodes, with their points) into slots, a subtree's
// power-of-two run of leaf slots, filling the slots they do not use with -1.
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

// selectNth reorders groups (nodes) and their points (k per group) so that
// the first nth come before the rest in the order of resource j (all equal
// when j < 0) and then of group number: quickselect.
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

// before orders groups by a quantity, then by number.
func before(va float64, na int32, vb float64, nb int32) bool {
	return va < vb || va == vb && na < nb
}

// Relayout. Takes make new groups after arrange placed the groups, and a new
// group takes its emptied predecessor's slot or whichever slot is free, so a
// layout that put similar vectors together drifts (a nearly full vector amid
// idle ones) and the search visits more of the tree. When searches have together visited as many tree nodes as a new
// layout costs, and visited far more per search than a tight layout needs,
// the groups are arranged afresh. A Take that gives a group its first member
// when no slot is free does the same, with a larger tree. Answers do not
// change; only speed.
const (
	// relayoutBudget is the visits, per leaf slot, that pay for a layout,
	// measured: a layout costs ~450 ns per group, a visit 20–30 ns.
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
		x.relayout(-1)
	}
	x.searched, x.visited = 0, 0
}

// relayout lays the groups with members out afresh: those with leaves, and
// pending (unless it is -1), which has just gained its first member.
func (x *Index) relayout(pending int32) {
	groups := x.order[:0]
	for _, g := range x.bySlot {
		if g >= 0 {
			groups = append(groups, g)
		}
	}
	if pending >= 0 {
		groups = append(groups, pending)
	}
	x.layout(groups)
}
