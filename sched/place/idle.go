package place

import "github.com/longfair/longfair/ledger"

// Idle returns the lowest-indexed node that is idle and exactly of
// capacity demand: its free vector and its capacity (capacity[node], the
// caller's, as the index is not told which nodes are idle) both equal
// demand bit for bit. It is the search for a task that takes its nodes
// whole (an exclusive job), whose demand is a node class's capacity: every
// strategy ties among such nodes, so the lowest index is what each of
// them would choose. It looks the free vector up among the twins (no tree
// search) and checks the group's members' capacities, the lowest first:
// one check when the group holds only nodes of that class, as it does
// unless a larger node's leftover happens to equal it.
func (x *Index) Idle(demand ledger.Vector, capacity []ledger.Vector) (node int, ok bool) {
	if len(demand) != x.k || len(capacity) < x.n {
		return 0, false
	}
	g := x.lookupTwins(demand)
	if g < 0 {
		return 0, false
	}
	first := x.representative(g)
	if first == noNode {
		return 0, false
	}
	if sameVector(capacity[first], demand) {
		return int(first), true
	}
	best := int32(noNode)
	r := x.twins.heaps[g]
	for _, v := range x.twins.arena[r.at : r.at+r.len] {
		if x.twins.group[v] == g && v < best && sameVector(capacity[v], demand) {
			best = v
		}
	}
	if best == noNode {
		return 0, false
	}
	return int(best), true
}

// lookupTwins returns the group of free vector f, or -1 when no node has
// had it; unlike twinGroup it creates none.
func (x *Index) lookupTwins(f []float64) int32 {
	tw := &x.twins
	if len(tw.table) == 0 {
		return -1
	}
	k := x.k
	hash := hashDemand(f)
	mask := len(tw.table) - 1
	for i := int(hash) & mask; tw.table[i].group >= 0; i = (i + 1) & mask {
		s := tw.table[i]
		if s.hash == hash && equal(tw.vectors[int(s.group)*k:int(s.group)*k+k], f) {
			return s.group
		}
	}
	return -1
}

// sameVector reports whether a and b are the same vector, bit for bit.
func sameVector(a, b ledger.Vector) bool { return len(a) == len(b) && equal(a, b) }
