package place

// The change log. Take updates a node's leaf at once but leaves the rest to
// whoever needs it: the search tree's inner nodes and every hot shape's
// tournament tree catch up when they are next asked, from this list of nodes
// whose free vectors shrank. A pass that places most tasks from hot shapes so
// barely touches the search tree, and a hot shape pays only for the Takes
// since its last use.

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
func (x *Index) rebuildAfter() int { return max(x.n/4, 64) }

// recordChange logs that node's free vector shrank. When the log grows long,
// followers too far behind are marked stale and the part every other
// follower has applied is dropped, so the log stays O(N).
func (x *Index) recordChange(node int) {
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
	x.changes = append(x.changes, int32(node))
}

func (x *Index) eachFollower(do func(*follower)) {
	do(&x.tree)
	for i := range x.hot.shapes {
		do(&x.hot.shapes[i].follower)
	}
}

// syncTree brings the search tree's inner nodes up to date.
func (x *Index) syncTree() {
	changed, ok := x.pending(&x.tree)
	if !ok {
		for t := x.leaves - 1; t >= 1; t-- {
			x.pull(t)
		}
	} else {
		for _, v := range changed {
			t := (x.leaves + int(x.slot[v])) / 2
			for t >= 1 && x.pull(t) {
				t /= 2
			}
		}
	}
	x.caughtUp(&x.tree)
}
