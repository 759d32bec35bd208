package place

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
)

// Take subtracts demand from node's free vector and updates the index: it
// changes the node's leaf and logs the change, and the trees above catch up
// when next used (changes.go). It does not allocate.
//
// Take is for the engine's hot path, right after Best chose node for this
// demand. Anything TryTake would refuse (a node out of range, a demand of the
// wrong length, negative or not finite, or that does not fit the node) leaves
// the index unchanged; call TryTake to learn why.
func (x *Index) Take(node int, demand ledger.Vector) {
	if x.takeable(node, demand) {
		x.take(node, demand)
	}
}

// TryTake is Take that says what was wrong with its input instead of
// ignoring it. On error the index is unchanged.
func (x *Index) TryTake(node int, demand ledger.Vector) error {
	if node < 0 || node >= x.n {
		return fmt.Errorf("take on node %d: the index holds %d nodes, numbered from 0", node, x.n)
	}
	if err := demand.Validate(x.k); err != nil {
		return fmt.Errorf("take on node %d: demand: %w", node, err)
	}
	if free := x.Free(node); !free.Fits(demand) {
		return fmt.Errorf("take on node %d: demand %v does not fit its free resources %v: ask Best for a node it fits", node, []float64(demand), []float64(free))
	}
	x.take(node, demand)
	return nil
}

func (x *Index) takeable(node int, demand ledger.Vector) bool {
	return node >= 0 && node < x.n && len(demand) == x.k && admissible(demand) && x.Free(node).Fits(demand)
}

func (x *Index) take(node int, demand ledger.Vector) {
	k := x.k
	free := ledger.Vector(x.nodeFree[node*k : node*k+k])
	free.Sub(demand)
	x.takes++
	x.recordChange(node) // every hot tree must see the new vector
	from, to := x.twins.group[node], x.twinGroup(free)
	if from == to {
		return // a zero or vanishing demand changed nothing
	}
	v := int32(node)
	wasLive := x.representative(from) == v
	displaced := x.representative(to)
	x.joinTwins(node, to)
	if wasLive { // the next member of the group it left represents it now
		if next := x.representative(from); next != noNode {
			x.setLeaf(next)
		}
	}
	switch {
	case v < displaced: // it represents the group it joined
		x.setLeaf(v)
		if displaced != noNode {
			x.setLeaf(displaced)
		}
	case wasLive:
		x.setLeaf(v)
	}
}

// setLeaf rewrites node v's leaf from its free vector and its standing as a
// representative, and logs it for the search tree to catch up.
func (x *Index) setLeaf(v int32) {
	t := x.leaves + int(x.slot[v])
	x.writeLeaf(t, v)
	x.markLeaf(t)
}
