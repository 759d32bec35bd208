package place

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Update makes the index hold capacity and free for strategy s, as Reset
// does, but cheaply when only free vectors changed: when the strategy and
// every capacity are those the index holds (bit for bit), it moves just the
// nodes whose free vector differs from the index's, as Restore does, and
// keeps the layout, the groups of twins and the hot trees. The engine calls
// it once per pass: between two passes of a replay a few tasks start and
// end, and rebuilding the index over every node was most of a pass.
//
// Answers are those a Reset would give: every path ranks nodes by their
// free vectors and capacities alone (see the package documentation), not
// by the history that built the index. Update checks what Reset checks and
// returns the same errors; on error the index is as it was. It falls back
// to a Reset when the nodes differ, and when groups of twins or their
// heaps, which Update only adds to, have grown well past the node count.
func (x *Index) Update(s Strategy, capacity, free []ledger.Vector) error {
	return x.update(s, capacity, free, true)
}

// UpdateFree is Update for a caller that knows capacity to be, bit for
// bit, what the index was last given by a Reset or an Update that
// succeeded: it does not compare the capacities again. The engine's pass
// compares them once for its own use (sched's fleet) and lets the index
// rely on that.
func (x *Index) UpdateFree(s Strategy, capacity, free []ledger.Vector) error {
	return x.update(s, capacity, free, false)
}

// update is Update, comparing the capacities when compare.
func (x *Index) update(s Strategy, capacity, free []ledger.Vector, compare bool) error {
	kd, err := kindOf(s)
	if err != nil || !x.current || kd != x.kind || len(capacity) != x.n || len(free) != x.n || x.overgrown() {
		return x.Reset(s, capacity, free)
	}
	k := x.k
	// Check first, change after: a bad vector leaves the index as it was.
	// A vector equal to the index's, bit for bit, was checked before or
	// came from Take or Restore.
	x.moved = x.moved[:0]
	for v, f := range free {
		c := capacity[v]
		if len(c) != k || len(f) != k || compare && !sameBits(x.caps[v*k:v*k+k], c) {
			return x.Reset(s, capacity, free) // other nodes, or a bad vector: Reset reports it
		}
		if sameBits(x.nodeFree[v*k:v*k+k], f) {
			continue
		}
		if err := validateFree(v, c, f); err != nil {
			return err
		}
		x.moved = append(x.moved, int32(v))
	}
	raised := false
	for _, v := range x.moved {
		if copyRaising(x.nodeFree[int(v)*k:int(v)*k+k], free[v]) {
			raised = true
		}
		x.regroup(int(v))
	}
	if raised {
		// The tree's bounds must catch up with vectors that rose (Restore).
		x.syncTree()
	}
	return nil
}

// overgrown reports whether the groups of twins or their heaps have grown
// past a few times the node count: Take, Restore and Update add groups and
// heap entries and only Reset drops them, so a long run of Updates resets
// now and then to keep the memory and the heaps' lazy deletions bounded.
func (x *Index) overgrown() bool {
	tw := &x.twins
	return tw.groups > 4*x.n+256 || len(tw.arena) > 16*x.n+1024
}

// validateFree checks node v's free vector f against its capacity c, as
// validateNodes does.
func validateFree(v int, c, f ledger.Vector) error {
	for j, q := range f {
		if math.IsNaN(q) || math.IsInf(q, 0) || q < -residue*max(1, c[j]) || q > c[j]+residue*max(1, c[j]) {
			return validateNodes(len(c), []ledger.Vector{c}, []ledger.Vector{f}, v)
		}
	}
	return nil
}
