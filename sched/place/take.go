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
	t := x.leaves + int(x.slot[node])
	copy(x.hi[t*k:t*k+k], free)
	copy(x.lo[t*k:t*k+k], free)
	x.hiIdle[t] = x.idle(free)
	x.loIdle[t] = x.hiIdle[t]
	x.joinTwins(node)
	x.recordChange(node)
	x.takes++
}
