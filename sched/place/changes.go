package place

// The change logs. Take updates a node's free vector and the leaves it
// affects at once but leaves the rest to whoever needs it: every hot shape's
// tournament tree catches up when it is next asked, and the search tree's
// inner nodes at the next search, each from its own list of the leaf slots
// rewritten since. A pass that places most tasks from hot shapes so barely
// touches the search tree, and a hot shape pays only for the Takes since its
// last use.

// follower is a structure that catches up from the change log.
type follower struct {
	// fresh is false when the structure must be rebuilt from the leaves:
	// after Reset, or when it fell too far behind.
	fresh bool
	// applied is how much of the log it reflects.
	applied int
}

// pending returns the changes f has not applied, or ok=false when f must
// rebuild instead (it is stale, or rebuilding is cheaper than replaying).
func (x *Index) pending(f *follower) (changed []int32, ok bool) {
	if !f.fresh || len(x.changes)-f.applied > x.rebuildAfter() {
		return nil, false
	}
	return x.changes[f.applied:], true
}

// caughtUp records that f reflects every change so far.
func (x *Index) caughtUp(f *follower) { f.fresh, f.applied = true, len(x.changes) }

// rebuildAfter is how many changes make rebuilding a structure (O(N))
// cheaper than replaying them (O(log N) each).
func (x *Index) rebuildAfter() int { return rebuildAfter(x.leaves) }

func rebuildAfter(leaves int) int { return max(leaves/4, 64) }

// restartLog empties the hot trees' log and leaves every tree to be rebuilt
// (after a layout moved the groups between slots).
func (x *Index) restartLog() {
	x.changes = x.changes[:0]
	x.eachFollower(func(f *follower) { f.fresh, f.applied = false, 0 })
}

// recordChange logs that leaf slot p was rewritten. When the log grows long,
// followers too far behind are marked stale and the part every other
// follower has applied is dropped, so the log stays O(N).
func (x *Index) recordChange(p int) {
	if len(x.changes) >= 2*x.rebuildAfter() {
		keep := len(x.changes)
		x.eachFollower(func(f *follower) {
			if len(x.changes)-f.applied > x.rebuildAfter() {
				f.fresh = false
			} else {
				keep = min(keep, f.applied)
			}
		})
		x.changes = x.changes[:copy(x.changes, x.changes[keep:])]
		x.eachFollower(func(f *follower) { f.applied = max(f.applied-keep, 0) })
	}
	x.changes = append(x.changes, int32(p))
}

func (x *Index) eachFollower(do func(*follower)) {
	for i := range x.hot.shapes {
		do(&x.hot.shapes[i].follower)
	}
}

// markLeaf logs that leaf slot t was rewritten, for the search tree to
// catch up; past rebuildAfter leaves it rebuilds the inner nodes instead.
func (x *Index) markLeaf(t int) {
	if len(x.dirty) <= x.rebuildAfter() {
		x.dirty = append(x.dirty, int32(t))
	}
}

// syncTree brings the search tree's inner nodes up to date.
func (x *Index) syncTree() {
	if len(x.dirty) > x.rebuildAfter() {
		for t := x.leaves - 1; t >= 1; t-- {
			x.pull(t)
		}
	} else {
		for _, leaf := range x.dirty {
			for t := int(leaf) / 2; t >= 1 && x.pull(t); t /= 2 {
			}
		}
	}
	x.dirty = x.dirty[:0]
}
