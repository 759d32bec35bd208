package place

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
)

// Index answers "on which node should this task go" for one strategy without
// scanning the nodes (see the package documentation for how).
//
// The zero Index holds no nodes; Reset fills it. An Index is not safe for
// concurrent use: Best keeps per-call scratch and caches in it, and Take
// changes it.
type Index struct {
	kind kind
	n    int // nodes
	k    int // resources per vector

	// leaves is the number of leaf slots, a power of two ≥ n; tree node t
	// (1-based heap order) has children 2t and 2t+1, leaf slot p is node
	// leaves+p. Slots past n are padding that holds no node.
	leaves int
	// hi and lo hold, for every tree node t, the component-wise max and min
	// of the free vectors below it at [t*k, t*k+k); a leaf's hi is its node's
	// free vector (and equals its lo).
	hi, lo []float64
	// hiIdle and loIdle are the max and min below t of a node's idle sum
	// Σ_j free_j/M_j, the key spread maximizes and best-fit minimizes;
	// hiTie and loTie are the lowest indices of nodes below t with those sums.
	// Leaves hold all of these, but inner nodes keep only what the
	// strategy's bound reads (pull): lo, loIdle and loTie for best-fit,
	// hiIdle and hiTie for spread; the rest of them is left stale.
	hiIdle, loIdle []float64
	hiTie, loTie   []int32
	// first is the lowest node index below t (noNode for padding only), so
	// ties can go to the lowest index even though leaves are not in index order.
	first []int32
	// bySlot is the group of twins in each leaf slot (-1: none); freeSlots
	// lists the slots without one. order, points and span are arrange's
	// scratch.
	bySlot, freeSlots, order []int32
	points, span             []float64
	// nodeFree holds the free vectors in node order, k each: the index's
	// own copy, which Take changes first and then copies to the node's leaf.
	nodeFree []float64
	// caps holds the capacities of the last Reset in node order, k each,
	// and current says there was one: Update compares against them.
	caps    []float64
	current bool
	// moved is Update's scratch: the nodes whose free vector changed.
	moved []int32
	// searched and visited count searches and the tree nodes they visited
	// since the last layout (arrange.go); layouts counts layouts.
	searched, visited, layouts int
	// inv holds 1/M_j per resource, or 0 for a resource no node has, so it
	// drops out of every score.
	inv []float64

	// Scratch: M_j while Reset checks its input; per Best call, the demand's
	// per-resource weights (affinity) or lowest free a fitting node can have
	// (best-fit).
	scale, weight, floor []float64

	// changes lists the leaf slots Take rewrote, for the hot trees; dirty
	// the leaves the search tree's inner nodes have not caught up with
	// (changes.go).
	changes, dirty []int32
	// takes counts Takes since Reset (hot.go spaces asks by it).
	takes uint64

	// hot holds the tournament trees of often-asked demands (hot.go).
	hot hotCache
	// twins groups nodes with identical free vectors (twins.go).
	twins twins
}

// kind is the strategy as a small integer, so the search's inner loop does not
// compare strings.
type kind uint8

const (
	kindAffinity kind = iota + 1
	kindBestFit
	kindSpread
)

func kindOf(s Strategy) (kind, error) {
	switch s {
	case Affinity:
		return kindAffinity, nil
	case BestFit:
		return kindBestFit, nil
	case Spread:
		return kindSpread, nil
	}
	return 0, fmt.Errorf("unknown placement strategy %q: use one of affinity, bestfit, spread", string(s))
}

// NewIndex copies capacity and free (one Vector per node, all the same length)
// and builds the index for strategy s. See Reset for what it checks.
func NewIndex(s Strategy, capacity, free []ledger.Vector) (*Index, error) {
	x := new(Index)
	if err := x.Reset(s, capacity, free); err != nil {
		return nil, err
	}
	return x, nil
}

// Len returns the number of nodes.
func (x *Index) Len() int { return x.n }

// Strategy returns the strategy the index ranks nodes by.
func (x *Index) Strategy() Strategy {
	switch x.kind {
	case kindAffinity:
		return Affinity
	case kindBestFit:
		return BestFit
	case kindSpread:
		return Spread
	}
	return ""
}

// Free returns node's free vector as the index sees it: a read-only view
// that reflects later Takes, valid until the next Reset. It returns nil for a
// node index out of range.
func (x *Index) Free(node int) ledger.Vector {
	if node < 0 || node >= x.n {
		return nil
	}
	at := node * x.k
	return ledger.Vector(x.nodeFree[at : at+x.k : at+x.k])
}

// maxFree is the component-wise max of the free vectors below tree node t
// (for a leaf, its node's free vector).
func (x *Index) maxFree(t int) ledger.Vector {
	at := t * x.k
	return ledger.Vector(x.hi[at : at+x.k : at+x.k])
}
