package place

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Restore sets node's free vector back to free, a value it had earlier in
// this pass (read with Free and copied before a Take), and updates the
// index as Take does. The engine uses it to undo the Takes of a parallel
// job whose later nodes did not fit: a gang is placed whole or not at
// all. Restoring the saved value, not adding the demand back, gives the
// index exactly the vector it had, bit for bit, so a pass that undoes a
// gang ranks and places afterwards as if it had never tried.
//
// A node out of range or a vector of the wrong length leaves the index
// unchanged.
func (x *Index) Restore(node int, free ledger.Vector) {
	if node < 0 || node >= x.n || len(free) != x.k {
		return
	}
	if sameBits(x.nodeFree[node*x.k:node*x.k+x.k], free) {
		// Nothing to undo. The engine restores masks that often equal
		// the free vector (a busy reserved node), and skipping them saves
		// the group lookup and the tree's sync; the tree's bounds stay
		// valid upper bounds, which is all a search needs.
		return
	}
	raised := copyRaising(x.nodeFree[node*x.k:node*x.k+x.k], free)
	x.regroup(node)
	// Takes only lower free vectors, so the tree's bounds may lag behind
	// them (they stay upper bounds, and Best reads the root's before it
	// syncs). A restore that raises one must bring the bounds up now; one
	// that only lowers (a mask) leaves them to catch up as a Take does.
	if raised {
		x.syncTree()
	}
}

// copyRaising copies src into dst and reports whether any entry rose.
func copyRaising(dst, src []float64) bool {
	raised := false
	for j, q := range src {
		raised = raised || !(q <= dst[j])
		dst[j] = q
	}
	return raised
}

// sameBits reports whether a and b (of one length) are equal bit for bit.
func sameBits(a, b []float64) bool {
	for j := range a {
		if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
			return false
		}
	}
	return true
}
