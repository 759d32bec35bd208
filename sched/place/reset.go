package place

import (
	"fmt"
	"math"

	"github.com/longfair/longfair/ledger"
)

const (
	// maxNodes bounds the node count so leaf slots fit an int32 with room.
	maxNodes = 1 << 28
	// noNode marks a padding subtree: larger than any node index, so it
	// never wins a tie.
	noNode = math.MaxInt32
	// minScale is the smallest largest-capacity a resource may have. Fits
	// forgives 1e-9 absolute, so a resource measured in units this small
	// could not be told apart from rounding residue.
	minScale = 1e-6
	// residue is how far (relative to the capacity, at least absolutely) a
	// free quantity may stray outside [0, capacity]: Take leaves up to the
	// fit tolerance below zero, and callers that sum and subtract usages
	// leave rounding residue. Anything further is a caller's bug.
	residue = 1e-6
)

// Reset replaces the index's nodes with copies of capacity and free for
// strategy s, reusing the index's memory; the engine calls it once per pass.
//
// It returns an error, and leaves the index as it was, when the strategy is
// unknown, when capacity and free do not have one vector per node, when any
// vector's length differs from the first capacity vector's, when a capacity is
// negative or not finite, when a free quantity is not finite or lies outside
// [0, capacity] by more than rounding residue, or when a resource's largest
// capacity is positive but below 1e-6 (too small to tell from the fit
// tolerance of ledger.Vector.Fits).
func (x *Index) Reset(s Strategy, capacity, free []ledger.Vector) error {
	kd, err := kindOf(s)
	if err != nil {
		return err
	}
	if len(capacity) != len(free) {
		return fmt.Errorf("got %d capacity vectors but %d free vectors: pass one of each per node, in the same order", len(capacity), len(free))
	}
	n := len(capacity)
	if n > maxNodes {
		return fmt.Errorf("%d nodes is more than the placement index holds (%d): split the cluster", n, maxNodes)
	}
	k := 0
	if n > 0 {
		k = len(capacity[0])
	}
	if err := validateNodes(k, capacity, free, 0); err != nil {
		return err
	}
	// x.scale is scratch: filling it before the checks pass changes no answer.
	x.scale = largestCapacity(x.scale, k, capacity)
	for j, m := range x.scale {
		if m > 0 && m < minScale {
			return fmt.Errorf("resource %d: the largest capacity any node has is %g, too small to tell from rounding (the fit tolerance is 1e-9): measure it in a smaller unit", j, m)
		}
	}

	x.kind, x.n, x.k = kd, n, k
	x.inv = grow(x.inv, k)
	for j, m := range x.scale {
		x.inv[j] = 0
		if m > 0 {
			x.inv[j] = 1 / m
		}
	}
	x.weight = grow(x.weight, k)
	x.floor = grow(x.floor, k)
	x.nodeFree = grow(x.nodeFree, n*k)
	x.caps = grow(x.caps, n*k)
	for v, f := range free {
		copy(x.nodeFree[v*k:v*k+k], f)
		copy(x.caps[v*k:v*k+k], capacity[v])
	}
	x.reserve()
	x.resetTwins()
	x.order = x.order[:x.twins.groups]
	for g := range x.order {
		x.order[g] = int32(g)
	}
	x.hot.reset(k)
	x.layout(x.order)
	x.takes = 0
	x.current = true
	return nil
}

// validateNodes checks every vector before anything is changed, so a bad
// input leaves the index as it was.
// Node numbers in its errors start at base.
func validateNodes(k int, capacity, free []ledger.Vector, base int) error {
	for at := range capacity {
		i := at + base
		if err := capacity[at].Validate(k); err != nil {
			return fmt.Errorf("node %d capacity: %w (every vector must list the same resources in the same order as node 0's capacity)", i, err)
		}
		if len(free[at]) != k {
			return fmt.Errorf("node %d free vector has %d entries, its capacity has %d: list the same resources in the same order", i, len(free[at]), k)
		}
		for j, f := range free[at] {
			c := capacity[at][j]
			slack := residue * max(1, c)
			switch {
			case math.IsNaN(f) || math.IsInf(f, 0):
				return fmt.Errorf("node %d free resource %d is %v: free quantities must be finite", i, j, f)
			case f < -slack:
				return fmt.Errorf("node %d free resource %d is %v, below zero: free quantities must lie between 0 and the capacity (%v)", i, j, f, c)
			case f > c+slack:
				return fmt.Errorf("node %d free resource %d is %v, above its capacity %v: free quantities must lie between 0 and the capacity", i, j, f, c)
			}
		}
	}
	return nil
}

// largestCapacity returns M_j, the largest capacity any node has of each
// resource j, in dst's memory.
func largestCapacity(dst []float64, k int, capacity []ledger.Vector) []float64 {
	dst = grow(dst, k)
	clear(dst)
	for _, c := range capacity {
		for j, v := range c {
			dst[j] = max(dst[j], v)
		}
	}
	return dst
}

// reserve gives every buffer room for the largest tree the nodes can need
// (every node in a group of its own), so a Take that grows the tree does not
// allocate.
func (x *Index) reserve() {
	k, leaves := x.k, leavesFor(x.n)
	size := 2 * leaves
	x.hi, x.lo = reserve(x.hi, size*k), reserve(x.lo, size*k)
	x.hiIdle, x.loIdle = reserve(x.hiIdle, size), reserve(x.loIdle, size)
	x.first = reserve(x.first, size)
	x.hiTie, x.loTie = reserve(x.hiTie, size), reserve(x.loTie, size)
	x.bySlot, x.freeSlots = reserve(x.bySlot, leaves), reserve(x.freeSlots, leaves)[:0]
	x.order, x.points = reserve(x.order, x.n), reserve(x.points, x.n*k)
	// The logs, whole: past rebuildAfter their followers rebuild instead.
	room := rebuildAfter(leaves)
	x.changes = reserve(x.changes, 2*room+1)[:0]
	x.dirty = reserve(x.dirty, room+1)[:0]
}

// leavesFor is the number of leaf slots a tree over groups of twins gets:
// a power of two with a quarter to spare, for groups that gain their first
// member later.
func leavesFor(groups int) int {
	leaves := 1
	for leaves < groups+groups/4+1 {
		leaves *= 2
	}
	return leaves
}

// layout lays groups out afresh (arrange.go), gives each a leaf and builds
// the search tree over them. groups must list every group with members.
func (x *Index) layout(groups []int32) {
	k := x.k
	x.leaves = 0
	x.freeSlots = x.freeSlots[:0]
	if x.n == 0 {
		return
	}
	x.leaves = leavesFor(len(groups))
	x.arrange(groups)
	size := 2 * x.leaves
	x.hi = grow(x.hi, size*k)
	x.lo = grow(x.lo, size*k)
	x.hiIdle = grow(x.hiIdle, size)
	x.loIdle = grow(x.loIdle, size)
	x.first = grow(x.first, size)
	x.hiTie = grow(x.hiTie, size)
	x.loTie = grow(x.loTie, size)
	for p, g := range x.bySlot {
		x.writeLeaf(x.leaves+p, g)
	}
	for t := x.leaves - 1; t >= 1; t-- {
		x.pull(t)
	}
	x.dirty = x.dirty[:0]
	x.restartLog() // the hot trees index leaf slots, which moved
	x.searched, x.visited = 0, 0
	x.layouts++
}

// writeLeaf fills leaf t with group g's free vector and representative, or
// with padding that holds no node when g < 0 (an unused slot).
func (x *Index) writeLeaf(t int, g int32) {
	k := x.k
	hi, lo := x.hi[t*k:t*k+k], x.lo[t*k:t*k+k]
	if g < 0 {
		for j := range hi {
			hi[j], lo[j] = math.Inf(-1), math.Inf(1)
		}
		x.hiIdle[t], x.loIdle[t] = math.Inf(-1), math.Inf(1)
		x.first[t], x.hiTie[t], x.loTie[t] = noNode, noNode, noNode
		return
	}
	free := x.groupVector(g)
	copy(hi, free)
	copy(lo, free)
	node := x.representative(g)
	x.first[t], x.hiTie[t], x.loTie[t] = node, node, node
	x.hiIdle[t] = x.idle(free)
	x.loIdle[t] = x.hiIdle[t]
}

// idle is a node's idle sum Σ_j free_j/M_j, the key of spread and best-fit.
// Always summed in resource order, so equal free vectors give equal keys.
func (x *Index) idle(free []float64) float64 { return dot(x.inv, free) }

// pull recomputes tree node t from its children and reports whether anything
// changed (when nothing did, no ancestor changes either). It keeps only what
// the strategy's bounds read: the lowest node index and the max vector
// always (they prune by ties and fit), the max idle sum for spread, the min
// vector and idle sum for best-fit.
func (x *Index) pull(t int) bool {
	k := x.k
	l, r := 2*t, 2*t+1
	changed := false
	if f := min(x.first[l], x.first[r]); f != x.first[t] {
		x.first[t], changed = f, true
	}
	hi := x.hi[t*k : t*k+k]
	lhi, rhi := x.hi[l*k:l*k+k], x.hi[r*k:r*k+k]
	for j := range hi {
		h := lhi[j]
		if rhi[j] > h {
			h = rhi[j]
		}
		if h != hi[j] {
			hi[j], changed = h, true
		}
	}
	switch x.kind {
	case kindSpread:
		h, ht := pick(x.hiIdle[l], x.hiTie[l], x.hiIdle[r], x.hiTie[r], x.hiIdle[r] > x.hiIdle[l])
		if h != x.hiIdle[t] || ht != x.hiTie[t] {
			x.hiIdle[t], x.hiTie[t], changed = h, ht, true
		}
	case kindBestFit:
		lo := x.lo[t*k : t*k+k]
		llo, rlo := x.lo[l*k:l*k+k], x.lo[r*k:r*k+k]
		for j := range lo {
			m := llo[j]
			if rlo[j] < m {
				m = rlo[j]
			}
			if m != lo[j] {
				lo[j], changed = m, true
			}
		}
		m, mt := pick(x.loIdle[l], x.loTie[l], x.loIdle[r], x.loTie[r], x.loIdle[r] < x.loIdle[l])
		if m != x.loIdle[t] || mt != x.loTie[t] {
			x.loIdle[t], x.loTie[t], changed = m, mt, true
		}
	}
	return changed
}

// pick chooses the right child's extreme idle sum when it is more extreme
// (rightWins), the left's otherwise; on equal sums the tie index is the
// lower of the two.
func pick(left float64, leftTie int32, right float64, rightTie int32, rightWins bool) (float64, int32) {
	switch {
	case rightWins:
		return right, rightTie
	case left == right:
		return left, min(leftTie, rightTie)
	}
	return left, leftTie
}

// reserve returns s with room for n elements, reusing its memory when it is
// large enough. The contents are unspecified.
func reserve[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s
	}
	return make([]T, n)
}

// grow returns s resized to n, reusing its memory when it is large enough.
// The contents are unspecified; callers overwrite them.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
