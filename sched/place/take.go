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
	x.regroup(node)
}

// regroup moves node, whose free vector just changed, to the group of
// twins its new vector belongs to, and rewrites the leaves that change.
func (x *Index) regroup(node int) {
	k := x.k
	free := ledger.Vector(x.nodeFree[node*k : node*k+k])
	from, to := x.twins.group[node], x.twinGroup(free)
	if from == to {
		return // a zero or vanishing demand changed nothing
	}
	v := int32(node)
	wasFirst := x.representative(from) == v
	joinedFirst := x.representative(to) // noNode: the group had no members
	x.joinTwins(node, to)
	slotOf := x.twins.slotOf
	if left := slotOf[from]; x.representative(from) == noNode {
		// Its group is empty now. The group it joined, if it was empty
		// too, takes over the leaf: its vector is close to the old one,
		// which keeps the layout's subtrees tight.
		slotOf[from] = -1
		x.bySlot[left] = -1
		if joinedFirst == noNode {
			x.bySlot[left], slotOf[to] = to, left
		} else {
			x.freeSlots = append(x.freeSlots, left)
		}
		x.setLeaf(left)
	} else if wasFirst {
		x.setLeaf(left) // the next member represents it
	}
	switch {
	case slotOf[to] < 0: // its first member: give it a leaf
		if len(x.freeSlots) == 0 {
			x.relayout(to) // a larger tree, laid out afresh
			return
		}
		at := x.freeSlots[len(x.freeSlots)-1]
		x.freeSlots = x.freeSlots[:len(x.freeSlots)-1]
		x.bySlot[at], slotOf[to] = to, at
		x.setLeaf(at)
	case v < joinedFirst && joinedFirst != noNode:
		x.setLeaf(slotOf[to]) // it represents the group now
	}
}

// setLeaf rewrites leaf slot p from the group it holds and logs it for the
// search tree and the hot trees to catch up.
func (x *Index) setLeaf(p int32) {
	x.writeLeaf(x.leaves+int(p), x.bySlot[p])
	x.markLeaf(x.leaves + int(p))
	x.recordChange(int(p))
}
