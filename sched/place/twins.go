package place

// Twins. Nodes of one class that ran the same tasks have identical free
// vectors, so they tie under every strategy, and there are often hundreds of
// them: 10,000 nodes in the middle of a pass hold only 100–200 distinct free
// vectors (BenchmarkPlacement's cluster). So the search tree's leaves are not
// nodes but groups of nodes with identical free vectors, each standing for
// its lowest-indexed member, its representative. A twin has the same key and
// fits the same demands as its representative, which wins their tie, so the
// search answers exactly as if every node had a leaf, while it ranks far
// fewer leaves in a smaller tree, and never has to prove that a twin with a
// lower index does not exist.
//
// A Take moves one node from its group to another, so it rewrites at most
// two leaves: the group it left (a new representative, or no members and no
// leaf) and the group it joined (a new representative, or its first member
// and a leaf). Free vectors only shrink, so a node joins each group at most
// once and leaves it for good; groups are never removed before Reset, but an
// emptied group can gain members again (another node reaching its vector).

// twins groups nodes by identical free vector.
type twins struct {
	// table maps a vector's hash to its group (open addressing, a power
	// of two long, at most half full).
	table []twinSlot
	// vectors holds group g's free vector at [g*k, g*k+k); hashes its hash.
	vectors []float64
	hashes  []uint64
	// heaps[g] locates group g's members in arena: a min-heap of node
	// indices. A node that left the group stays until it reaches the top.
	heaps []heapRegion
	arena []int32
	// group is each node's group. left is, for each node, a group whose
	// heap still holds an entry of the node's, which it left (-1: none
	// known): a node that goes back to that group takes up that entry
	// again rather than adding one. Nodes that move between the same two
	// or three groups, task after task, so leave the heaps the size of the
	// groups rather than growing them with entries to drop.
	group  []int32
	left   []int32
	groups int
	// slotOf is each group's leaf slot in the search tree, -1 while it has
	// none (it has no members, or a Take just gave it its first).
	slotOf []int32
}

type twinSlot struct {
	hash  uint64
	group int32 // -1: empty
}

// heapRegion is a group's heap: arena[at:at+len], with room for size.
type heapRegion struct {
	at, len, size int32
}

// resetTwins groups the nodes by their free vectors, reusing memory.
func (x *Index) resetTwins() {
	tw := &x.twins
	tw.groups = 0
	tw.arena = tw.arena[:0]
	tw.group, tw.left = grow(tw.group, x.n), grow(tw.left, x.n)
	tw.rehash(max(64, 4*x.n))
	for v := range x.n {
		tw.group[v], tw.left[v] = -1, -1
		x.joinTwins(v, x.twinGroup(x.Free(v)))
	}
}

// joinTwins puts node v in group g, which must differ from its group.
// Its entry in its group's heap stays there (representative drops it
// when it reaches the top) and is the one it takes up again if it comes
// back, unless it has been dropped by then.
func (x *Index) joinTwins(v int, g int32) {
	tw := &x.twins
	from := tw.group[v]
	tw.group[v] = g
	back := tw.left[v] == g
	tw.left[v] = from
	if back {
		return // its entry in g's heap is its again
	}
	r := &tw.heaps[g]
	if r.len == r.size { // move the heap to the end of the arena, doubled
		size := max(2*r.size, 1)
		at := len(tw.arena)
		tw.arena = growKeep(tw.arena, at+int(size))
		copy(tw.arena[at:], tw.arena[r.at:r.at+r.len])
		r.at, r.size = int32(at), size
	}
	h := tw.arena[r.at : r.at+r.len+1]
	r.len++
	h[len(h)-1] = int32(v)
	for i := len(h) - 1; i > 0; { // sift up
		parent := (i - 1) / 2
		if h[parent] <= h[i] {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

// representative returns the lowest index of a node in group g, or noNode
// when g is empty (g < 0 is no group).
func (x *Index) representative(g int32) int32 {
	tw := &x.twins
	if g < 0 {
		return noNode
	}
	r := &tw.heaps[g]
	h := tw.arena[r.at : r.at+r.len]
	for len(h) > 0 && tw.group[h[0]] != g { // it left the group: drop it
		if tw.left[h[0]] == g {
			tw.left[h[0]] = -1 // none to take up again (another copy of it there is forgotten)
		}
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		for i := 0; ; { // sift down
			small, l, rt := i, 2*i+1, 2*i+2
			if l < len(h) && h[l] < h[small] {
				small = l
			}
			if rt < len(h) && h[rt] < h[small] {
				small = rt
			}
			if small == i {
				break
			}
			h[i], h[small] = h[small], h[i]
			i = small
		}
	}
	r.len = int32(len(h))
	if len(h) == 0 {
		return noNode
	}
	return h[0]
}

// groupVector is group g's free vector.
func (x *Index) groupVector(g int32) []float64 {
	at := int(g) * x.k
	return x.twins.vectors[at : at+x.k : at+x.k]
}

// twinGroup returns the group of free vector f, creating it if new.
func (x *Index) twinGroup(f []float64) int32 {
	if g := x.lookupTwins(f); g >= 0 {
		return g
	}
	tw := &x.twins
	k := x.k
	hash := hashDemand(f)
	if 2*(tw.groups+1) > len(tw.table) {
		tw.rehash(2 * len(tw.table))
	}
	g := tw.groups
	tw.groups++
	tw.vectors = growKeep(tw.vectors, tw.groups*k)
	copy(tw.vectors[g*k:], f)
	tw.hashes = growKeep(tw.hashes, tw.groups)
	tw.hashes[g] = hash
	tw.heaps = growKeep(tw.heaps, tw.groups)
	tw.heaps[g] = heapRegion{}
	tw.slotOf = growKeep(tw.slotOf, tw.groups)
	tw.slotOf[g] = -1
	tw.insert(hash, int32(g))
	return int32(g)
}

// rehash sizes the table to at least size slots (a power of two) and
// re-inserts the groups.
func (tw *twins) rehash(size int) {
	n := 1
	for n < size {
		n *= 2
	}
	tw.table = grow(tw.table, n)
	for i := range tw.table {
		tw.table[i] = twinSlot{group: -1}
	}
	for g := range tw.groups {
		tw.insert(tw.hashes[g], int32(g))
	}
}

func (tw *twins) insert(hash uint64, g int32) {
	mask := len(tw.table) - 1
	i := int(hash) & mask
	for tw.table[i].group >= 0 {
		i = (i + 1) & mask
	}
	tw.table[i] = twinSlot{hash: hash, group: g}
}

// growKeep returns s lengthened to n, keeping its contents; when it must
// reallocate it doubles, so a sequence of growths costs O(n) in all and
// memory kept across Resets is reused.
func growKeep[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	t := make([]T, n, max(n, 2*cap(s)))
	copy(t, s)
	return t
}
