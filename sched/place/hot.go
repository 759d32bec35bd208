package place

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Hot shapes. A pass places many tasks of few shapes (a job is an array of
// identical tasks), so a demand asked for again and again gets a tournament
// tree of its own: winner[t] is the best node below t that the demand fits,
// which makes Best one look-up. The tree is brought up to date lazily, when
// its shape is asked for, from a log of the nodes Take changed. Free vectors
// only shrink between Resets, so a Take on node v changes only the ancestors
// whose winner was v (its key fell) or becomes v (best-fit: it got fuller),
// usually a few levels. The branch-and-bound search serves the other shapes.
const (
	// promoteAfter is how often a demand is asked for before it gets a
	// tree: building one costs about as much as a few searches.
	promoteAfter = 4
	// maxHot bounds the trees kept; the least recently used one makes
	// room. A tree takes 32 bytes per leaf slot (512 KiB for 10,000
	// nodes), and hotMemory bounds them all together on huge clusters.
	maxHot    = 16
	hotMemory = 64 << 20
	// recentSlots is the size of the table that counts how often recent
	// demands were asked for (direct-mapped by hash; a power of two).
	recentSlots = 256
)

// hotShape is one demand's tournament tree.
type hotShape struct {
	hash   uint64
	demand []float64
	weight []float64 // prepared as for search, so keys match bit for bit
	// winner[leaves+v] is node v if the demand fits it, else none;
	// winner[t] is the better of its children's winners. Keeping the key
	// beside the node means a catch-up reads one cache line per level.
	winner []entry
	// follower says how much of the change log the tree reflects.
	follower
	// used is the clock of the last Best for this shape, for eviction.
	used uint64
}

// entry is a tournament tree slot: a node and its key, or none.
type entry struct {
	key  float64
	node int32
}

// none is the entry of a subtree the demand fits nowhere in; its key loses
// to every node's.
func none() entry { return entry{key: math.Inf(-1), node: noNode} }

// recentShape counts the asks for one recent demand.
type recentShape struct {
	hash  uint64
	count int
	used  bool
}

// hotCache holds the index's hot shapes and what it needs to pick them.
type hotCache struct {
	shapes []hotShape
	recent []recentShape
	// recentDemand holds recent[i]'s demand at [i*k, i*k+k).
	recentDemand []float64
	clock        uint64
	// promote overrides promoteAfter when positive (tests use it to force
	// every demand onto one path).
	promote int
}

// reset forgets every shape (node data changed under them) but keeps the
// memory of their trees for reuse.
func (h *hotCache) reset(k int) {
	h.shapes = h.shapes[:0]
	h.recent = grow(h.recent, recentSlots)
	clear(h.recent)
	h.recentDemand = grow(h.recentDemand, recentSlots*k)
}

// bestHot answers Best from demand's tree when it has one (handled=true),
// promoting a demand to a tree once it has been asked for often enough.
func (x *Index) bestHot(demand ledger.Vector) (node int, ok, handled bool) {
	h := &x.hot
	h.clock++
	hash := hashDemand(demand)
	for i := range h.shapes {
		s := &h.shapes[i]
		if s.hash == hash && equal(s.demand, demand) {
			return x.answer(s)
		}
	}
	if len(h.recent) == 0 {
		return 0, false, false // a zero Index that has never been Reset
	}
	slot := int(hash & (recentSlots - 1))
	r := &h.recent[slot]
	seen := h.recentDemand[slot*x.k : slot*x.k+x.k]
	if r.used && r.hash == hash && equal(seen, demand) {
		r.count++
	} else {
		*r = recentShape{hash: hash, count: 1, used: true}
		copy(seen, demand)
	}
	limit := promoteAfter
	if h.promote > 0 {
		limit = h.promote
	}
	if r.count < limit {
		return 0, false, false
	}
	r.used = false
	return x.answer(x.promoteShape(hash, demand))
}

// answer brings s up to date and reads its root.
func (x *Index) answer(s *hotShape) (node int, ok, handled bool) {
	s.used = x.hot.clock
	x.catchUp(s)
	if w := s.winner[1]; w.node != noNode {
		return int(w.node), true, true
	}
	return -1, false, true
}

// promoteShape gives demand a tree slot, evicting the least recently used
// shape when all are taken; the tree is built by the first catchUp.
func (x *Index) promoteShape(hash uint64, demand ledger.Vector) *hotShape {
	h := &x.hot
	var s *hotShape
	if len(h.shapes) < x.maxHot() {
		if len(h.shapes) < cap(h.shapes) {
			h.shapes = h.shapes[:len(h.shapes)+1] // reuse an old tree's memory
		} else {
			h.shapes = append(h.shapes, hotShape{})
		}
		s = &h.shapes[len(h.shapes)-1]
	} else {
		s = &h.shapes[0]
		for i := range h.shapes {
			if h.shapes[i].used < s.used {
				s = &h.shapes[i]
			}
		}
	}
	s.hash, s.fresh = hash, false
	s.demand = append(s.demand[:0], demand...)
	s.weight = grow(s.weight, x.k)
	return s
}

// maxHot is how many trees the index keeps for its size.
func (x *Index) maxHot() int {
	return min(maxHot, max(1, hotMemory/(32*max(1, x.leaves))))
}

// catchUp applies the Takes s has not seen, or rebuilds s when that is
// cheaper (or its tree is stale).
func (x *Index) catchUp(s *hotShape) {
	changed, ok := x.pending(&s.follower)
	if !ok {
		x.buildShape(s)
		return
	}
	for _, v := range changed {
		x.refresh(s, int(v))
	}
	x.caughtUp(&s.follower)
}

// buildShape builds s's tree from scratch.
func (x *Index) buildShape(s *hotShape) {
	x.prepare(s.demand, s.weight, x.floor)
	span := x.leaves
	s.winner = grow(s.winner, 2*span)
	for v := range span {
		s.winner[span+v] = x.leafEntry(s, v)
	}
	for t := span - 1; t >= 1; t-- {
		s.winner[t] = better(s.winner[2*t], s.winner[2*t+1])
	}
	x.caughtUp(&s.follower)
}

// refresh updates s's tree after node v's free vector shrank.
func (x *Index) refresh(s *hotShape, v int) {
	t := x.leaves + v
	s.winner[t] = x.leafEntry(s, v)
	for t > 1 {
		t /= 2
		old := s.winner[t]
		w := better(s.winner[2*t], s.winner[2*t+1])
		s.winner[t] = w
		// Unchanged winner that is not v: its key is unchanged too, so
		// nothing above changes.
		if w.node == old.node && old.node != int32(v) {
			return
		}
	}
}

// leafEntry is node v's tournament slot for s (none past the last node).
func (x *Index) leafEntry(s *hotShape, v int) entry {
	if v >= x.n || !x.Free(v).Fits(s.demand) {
		return none()
	}
	return entry{key: x.leafKey(x.leaves+int(x.slot[v]), s.weight), node: int32(v)}
}

// better returns the better of a, from a left subtree (so on equal keys the
// lower index), and b, from the right one. Keys are finite, so none() (key
// -Inf) loses to any node, and two nones give none.
func better(a, b entry) entry {
	if b.key > a.key {
		return b
	}
	return a
}

// hashDemand hashes a demand's quantities (0 and -0 alike, as == sees them).
func hashDemand(demand ledger.Vector) uint64 {
	h := uint64(14695981039346656037)
	for _, d := range demand {
		b := math.Float64bits(d)
		if d == 0 {
			b = 0
		}
		h = (h ^ b) * 1099511628211
		h ^= h >> 32
	}
	return h
}

func equal(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return len(a) == len(b)
}
