package place

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Scores. The index ranks nodes by a key it maximizes; each strategy's key is
// its score from the package documentation up to a constant (or a sign) that
// is the same for every node, so the order of nodes is the same:
//
//	affinity  Σ_j c_j·free_j, c_j = (d_j/M_j)/M_j  = Σ_j (d_j/M_j)(free_j/M_j)
//	spread    Σ_j free_j/M_j                        (the node's idle sum)
//	bestfit   −Σ_j free_j/M_j = −Σ_j (free_j−d_j)/M_j − Σ_j d_j/M_j
//
// Every bound below is the same arithmetic applied to a vector that is at
// least (affinity, spread) or at most (best-fit) every fitting node's free
// vector below the subtree. Rounded IEEE arithmetic is monotone, so the bound
// holds for the computed keys, not just for exact ones: a subtree whose bound
// does not beat the best node found so far (or only ties it with a higher
// lowest index) cannot hold a better node, and ties resolve exactly.

// fitSlack is how far below a demand a node's free quantity may be and still
// pass ledger.Vector.Fits: twice its absolute tolerance of 1e-9, plus relative
// room for the rounding of free+1e-9. TestFitSlackCoversLedgerTolerance
// guards the relation.
const (
	fitSlack         = 2e-9
	fitSlackRelative = 1e-15
)

// frame is a subtree waiting on the search stack with its bound and the
// lowest index a node below it scoring exactly the bound can have.
type frame struct {
	t, tie int32
	bound  float64
}

// Best returns the best node for demand under the index's strategy among the
// nodes where it fits (ledger.Vector.Fits: free ≥ demand in every resource,
// up to its tolerance), and ok=false when it fits on none. Equal scores go to
// the lowest node index. A demand whose length differs from the nodes'
// vectors, or with a negative or non-finite entry, fits nowhere.
//
// A demand whose searches have cost enough gets a tree of its own (hot.go)
// and is then answered in O(1) plus about O(log N) per Take since it was last
// asked for. Other demands are found by branch and bound over the search
// tree, which visits O(log N) subtrees when the bounds are tight, and more
// when many nodes score above the answer but do not fit it or tie with it.
// Best allocates only when the Index first needs memory for another tree.
func (x *Index) Best(demand ledger.Vector) (node int, ok bool) {
	if x.n == 0 || len(demand) != x.k || !admissible(demand) || !x.maxFree(1).Fits(demand) {
		return -1, false
	}
	if node, ok, hot := x.bestHot(demand); hot {
		return node, ok
	}
	return x.search(demand)
}

// search is Best by branch and bound over the tree.
func (x *Index) search(demand ledger.Vector) (node int, ok bool) {
	x.syncTree()
	if !x.maxFree(1).Fits(demand) { // Best looked before the sync
		return -1, false
	}
	x.prepare(demand, x.weight, x.floor)
	// Depth ≤ 29 and each step pops one frame and pushes at most two.
	var stack [64]frame
	b, tie := x.candidateBound(1)
	stack[0] = frame{1, tie, b}
	sp := 1
	bestKey, bestNode := math.Inf(-1), int32(noNode)
	visits := 0
	for sp > 0 {
		visits++
		sp--
		f := stack[sp]
		t := int(f.t)
		// The best may have improved since t was pushed.
		if !beats(f.bound, f.tie, bestKey, bestNode) {
			continue
		}
		if t >= x.leaves {
			// A leaf's bound is its key and it fits: it is the new best
			// (and the lowest-indexed of its twins, twins.go).
			bestKey, bestNode = f.bound, f.tie
			continue
		}
		l, r := 2*t, 2*t+1
		lf, lok := x.candidate(l, demand, bestKey, bestNode)
		rf, rok := x.candidate(r, demand, bestKey, bestNode)
		switch {
		case lok && rok:
			// Push the more promising child last so it is searched first:
			// finding a good node early prunes more of the other.
			if beats(rf.bound, rf.tie, lf.bound, lf.tie) {
				stack[sp], stack[sp+1] = lf, rf
			} else {
				stack[sp], stack[sp+1] = rf, lf
			}
			sp += 2
		case lok:
			stack[sp] = lf
			sp++
		case rok:
			stack[sp] = rf
			sp++
		}
	}
	x.noteSearch(visits)
	x.noteVisits(visits)
	if bestNode == noNode {
		return -1, false
	}
	return int(bestNode), true
}

// beats reports whether a subtree with this bound and tie index could hold a
// node better than the best found: a higher key, or an equal key at a lower
// index.
func beats(bound float64, tie int32, bestKey float64, bestNode int32) bool {
	return bound > bestKey || bound == bestKey && tie < bestNode
}

// candidate reports whether subtree t is worth searching for demand, and its
// frame: it must hold a node, its max vector must cover the demand, and its
// bound must beat the best so far.
func (x *Index) candidate(t int, demand ledger.Vector, bestKey float64, bestNode int32) (frame, bool) {
	if x.first[t] == noNode || !x.maxFree(t).Fits(demand) {
		return frame{}, false
	}
	b, tie := x.candidateBound(t)
	return frame{int32(t), tie, b}, beats(b, tie, bestKey, bestNode)
}

// candidateBound is a leaf's key and node, or an inner tree node's bound and
// tie index.
func (x *Index) candidateBound(t int) (bound float64, tie int32) {
	if t >= x.leaves {
		return x.leafKey(t, x.weight), x.first[t]
	}
	return x.bound(t)
}

// prepare computes the per-demand terms of the keys and bounds into
// weight (affinity: c_j) and floor (best-fit: the least free_j a node the
// demand fits can have).
func (x *Index) prepare(demand ledger.Vector, weight, floor []float64) {
	switch x.kind {
	case kindAffinity:
		for j, d := range demand {
			weight[j] = d * x.inv[j] * x.inv[j]
		}
	case kindBestFit:
		for j, d := range demand {
			floor[j] = d - (fitSlack + d*fitSlackRelative)
		}
	}
}

// leafKey is the key of the group in leaf t; weight is the demand's, from
// prepare. The search and the hot trees both rank leaves by this one
// function, so they agree to the last bit.
func (x *Index) leafKey(t int, weight []float64) float64 {
	switch x.kind {
	case kindAffinity:
		return dot(weight, x.hi[t*x.k:t*x.k+x.k])
	case kindSpread:
		return x.hiIdle[t]
	default:
		return -x.hiIdle[t]
	}
}

// bound is the highest key any node below the inner tree node t that fits
// the prepared demand can have, and the lowest index a node below t with
// exactly that key can have. Ties are common (identical nodes, integer
// quantities), so where the bound is a key some node has (the idle sums) the
// tie index is that node's, not just the subtree's lowest index, which lets
// the search skip subtrees that only tie.
func (x *Index) bound(t int) (float64, int32) {
	k := x.k
	switch x.kind {
	case kindAffinity:
		return dot(x.weight, x.hi[t*k:t*k+k]), x.first[t]
	case kindSpread:
		return x.hiIdle[t], x.hiTie[t]
	default: // best-fit: minimize the idle sum, so negate.
		// A fitting node has free_j ≥ floor_j, and ≥ the subtree's min;
		// summed exactly as dot sums, so for a leaf this is its idle sum.
		lo := x.lo[t*k : t*k+k]
		s := 0.0
		for j, inv := range x.inv[:k] {
			s += float64(max(lo[j], x.floor[j]) * inv)
		}
		if x.loIdle[t] >= s {
			return -x.loIdle[t], x.loTie[t]
		}
		return -s, x.first[t]
	}
}

// dot is Σ_j w_j·v_j in resource order. The float64 conversion stops the
// compiler fusing multiply and add (which it may do on some CPUs), so every
// caller gets bit-identical sums from identical inputs.
func dot(w, v []float64) float64 {
	s := 0.0
	for j, a := range w {
		s += float64(a * v[j])
	}
	return s
}

// admissible reports whether every entry of demand is finite and
// non-negative.
func admissible(demand ledger.Vector) bool {
	for _, d := range demand {
		if !(d >= 0) || d > math.MaxFloat64 {
			return false
		}
	}
	return true
}
