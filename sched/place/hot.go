package place

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Hot shapes. A pass places many tasks of few shapes (a job is an array of
// identical tasks), so a demand asked for again and again can get a
// tournament tree of its own over the search tree's leaf slots (groups of
// twins): winner[t] is the best node below t that the demand fits, which
// makes Best one look-up. The tree is brought up to date lazily, when its
// shape is asked for, from the change log of rewritten leaves; a change
// climbs only as far as it changes a winner, usually a few levels. A
// relayout moves groups between slots, so it leaves every tree to be rebuilt.
// The branch-and-bound search serves the other shapes.
//
// Which demands get trees. Building one costs O(N), about promoteCost search
// visits per leaf slot, so a demand qualifies once its searches have together
// visited that much (rent or buy): a demand that searches answer cheaply gets
// a tree late if at all, one they answer badly soon does, and every tree
// built has been paid for by searches. When every tree is taken, a
// qualifying demand replaces the tree asked for least often, and only if it
// has itself been asked for more often (counts halve every agePeriod asks, so
// they follow the pass as it moves on). Without that test, more demands than
// trees asked for in turn would evict each tree before it paid for itself.
//
// Catch-ups are not free: when many demands are asked for in turn, each tree
// replays every Take made since its demand was last asked for. So a tree
// must also pay per ask: a demand gets one only while the Takes between its
// asks (a moving average), at replayVisits each, cost less than its searches
// visited, and a tree whose replays grow to evictAfter times that is given
// up, its demand going back to searches. In the engine's worst case (1,000
// accounts served in turn, BenchmarkBestTakeInterleaved) that leaves few
// trees, where trees replaying ~100 Takes per ask made passes slower.
const (
	// promoteCost is a tree's cost in search visits per leaf slot,
	// measured: a build spends 6–14 ns per slot, a visit about 30 ns.
	promoteCost = 0.5
	// maxHot bounds the trees kept. A tree takes 32 bytes per leaf slot
	// (512 KiB for 10,000 nodes); hotMemory bounds them all together on
	// huge clusters.
	maxHot    = 16
	hotMemory = 64 << 20
	// recentSlots is the size of the table that keeps count of recent
	// demands (direct-mapped by hash; a power of two).
	recentSlots = 256
	// agePeriod is how many asks pass between halvings of the counts.
	agePeriod = 4096
	// replayVisits is what a tree's catch-up costs per Take it replays,
	// in search visits, measured.
	replayVisits = 4
	// evictAfter is how many times the search visits it replaced a tree's
	// catch-ups must cost before the tree is given up (hysteresis: a
	// demand's spacing varies).
	evictAfter = 2
	// gapSmoothing is the span of the moving average of Takes between
	// asks.
	gapSmoothing = 8
)

// hotShape is one demand's tournament tree.
type hotShape struct {
	hash   uint64
	demand []float64
	weight []float64 // prepared as for search, so keys match bit for bit
	// winner[leaves+p] is the representative of the group in leaf slot p
	// if the demand fits it, else none; winner[t] is the better of its
	// children's winners. Keeping the key beside the node means a
	// catch-up reads one cache line per level.
	winner []entry
	// follower says how much of the change log the tree reflects.
	follower
	// asks counts (with ageing) the Bests this tree answered.
	asks int
	// spacing is the Takes between asks; searchVisits what a search
	// for the demand visited on average before it got the tree.
	spacing
	searchVisits float64
}

// spacing follows how many Takes go by between asks for one demand: a
// tree replays them all at its next ask.
type spacing struct {
	// lastTake is Index.takes at the last ask; gap the moving average of
	// Takes between asks.
	lastTake uint64
	gap      float64
}

// ask records an ask at Take count takes.
func (p *spacing) ask(takes uint64) {
	p.gap += (float64(takes-p.lastTake) - p.gap) / gapSmoothing
	p.lastTake = takes
}

// entry is a tournament tree slot: a node and its key, or none.
type entry struct {
	key  float64
	node int32
}

// none is the entry of a subtree the demand fits nowhere in; its key loses
// to every node's.
func none() entry { return entry{key: math.Inf(-1), node: noNode} }

// recentShape is what one recent demand without a tree has cost.
type recentShape struct {
	hash uint64
	// visits is what its searches visited; asks counts (with ageing) how
	// often it was asked for.
	visits, asks int
	used         bool
	// searches counts its searches, spacing its asks.
	searches int
	spacing
}

// hotCache holds the index's hot shapes and what it needs to pick them.
type hotCache struct {
	shapes []hotShape
	recent []recentShape
	// recentDemand holds recent[i]'s demand at [i*k, i*k+k).
	recentDemand []float64
	// sinceAgeing counts asks since the counts were last halved.
	sinceAgeing int
	// last is the recent slot of the demand Best is serving, -1 if none.
	last int
	// promote overrides the visits that earn a tree when positive (tests
	// use it to force demands onto one path).
	promote int
	// grants and searched count trees given to demands and all search
	// visits, for tests.
	grants, searched int
}

// reset forgets every shape (node data changed under them) but keeps the
// memory of their trees for reuse.
func (h *hotCache) reset(k int) {
	h.shapes = h.shapes[:0]
	h.recent = grow(h.recent, recentSlots)
	clear(h.recent)
	h.recentDemand = grow(h.recentDemand, recentSlots*k)
	h.sinceAgeing = 0
}

// bestHot answers Best from demand's tree when it has one (handled=true),
// giving a demand a tree when it has earned one.
func (x *Index) bestHot(demand ledger.Vector) (node int, ok, handled bool) {
	h := &x.hot
	h.last = -1
	if len(h.recent) == 0 {
		return 0, false, false // a zero Index that has never been Reset
	}
	h.age()
	hash := hashDemand(demand)
	// dropped is the spacing of a demand whose tree was just given up (a
	// value and a flag, not a pointer, which would escape and allocate).
	var dropped spacing
	wasDropped := false
	for i := range h.shapes {
		s := &h.shapes[i]
		if s.hash == hash && equal(s.demand, demand) {
			s.asks++
			s.ask(x.takes)
			if !x.replayCosts(s.gap, evictAfter*s.searchVisits) {
				return x.answer(s)
			}
			// Its catch-ups now cost more than searches: the demand
			// goes back to searches, and its tree to other demands.
			dropped, wasDropped = s.spacing, true
			last := len(h.shapes) - 1
			h.shapes[i], h.shapes[last] = h.shapes[last], h.shapes[i]
			h.shapes = h.shapes[:last] // keeps the tree's memory for reuse
			break
		}
	}
	slot := int(hash & (recentSlots - 1))
	r := &h.recent[slot]
	seen := h.recentDemand[slot*x.k : slot*x.k+x.k]
	switch {
	case !r.used || r.hash != hash || !equal(seen, demand):
		*r = recentShape{hash: hash, used: true, spacing: spacing{lastTake: x.takes}}
		copy(seen, demand)
		if wasDropped {
			r.spacing = dropped
		}
	case !wasDropped:
		r.ask(x.takes)
	}
	r.asks++
	if r.visits >= x.promoteVisits() {
		perSearch := float64(r.visits) / float64(max(r.searches, 1))
		if x.replayCosts(r.gap, perSearch) {
			r.visits, r.searches = 0, 0 // earn it again, asked closer together
		} else if s := x.treeFor(r.asks); s != nil {
			s.hash, s.asks = hash, r.asks
			s.demand = append(s.demand[:0], demand...)
			s.weight = grow(s.weight, x.k)
			s.fresh = false // the first catch-up builds it
			h.grants++
			s.spacing, s.searchVisits = r.spacing, perSearch
			r.used = false
			return x.answer(s)
		}
	}
	h.last = slot
	return 0, false, false
}

// answer brings s up to date and reads its root.
func (x *Index) answer(s *hotShape) (node int, ok, handled bool) {
	x.catchUp(s)
	if w := s.winner[1]; w.node != noNode {
		return int(w.node), true, true
	}
	return -1, false, true
}

// age halves every count each agePeriod asks.
func (h *hotCache) age() {
	if h.sinceAgeing++; h.sinceAgeing < agePeriod {
		return
	}
	h.sinceAgeing = 0
	for i := range h.shapes {
		h.shapes[i].asks /= 2
	}
	for i := range h.recent {
		h.recent[i].asks /= 2
	}
}

// treeFor returns a tree slot for a demand asked for asks times: a free one,
// or the one asked for least if that was asked for less; nil if none.
func (x *Index) treeFor(asks int) *hotShape {
	h := &x.hot
	if len(h.shapes) < x.maxHot() {
		if len(h.shapes) < cap(h.shapes) {
			h.shapes = h.shapes[:len(h.shapes)+1] // reuse an old tree's memory
		} else {
			h.shapes = append(h.shapes, hotShape{})
		}
		return &h.shapes[len(h.shapes)-1]
	}
	victim := &h.shapes[0]
	for i := range h.shapes {
		if h.shapes[i].asks < victim.asks {
			victim = &h.shapes[i]
		}
	}
	if victim.asks >= asks {
		return nil
	}
	return victim
}

// noteVisits charges a search's visits to the demand Best is serving.
func (x *Index) noteVisits(visits int) {
	x.hot.searched += visits
	if x.hot.last >= 0 {
		x.hot.recent[x.hot.last].visits += visits
		x.hot.recent[x.hot.last].searches++
	}
}

// replayCosts reports whether a tree for a demand asked every gap Takes
// would cost more in catch-ups than searches that visit searchVisits tree
// nodes. Tests that force demands onto trees (promote) skip the test.
func (x *Index) replayCosts(gap, searchVisits float64) bool {
	return x.hot.promote == 0 && gap*replayVisits > searchVisits
}

// promoteVisits is how many search visits earn a demand its tree.
func (x *Index) promoteVisits() int {
	if x.hot.promote > 0 {
		return x.hot.promote
	}
	return max(int(promoteCost*float64(x.leaves)), 16)
}

// maxHot is how many trees the index keeps for its size.
func (x *Index) maxHot() int {
	return min(maxHot, max(1, hotMemory/(32*leavesFor(x.n))))
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
	// Room for the largest tree the nodes can need, so a tree rebuilt
	// after a layout that grew the search tree does not allocate.
	s.winner = grow(reserve(s.winner, 2*leavesFor(x.n)), 2*span)
	for p := range span {
		s.winner[span+p] = x.leafEntry(s, p)
	}
	for t := span - 1; t >= 1; t-- {
		s.winner[t] = better(s.winner[2*t], s.winner[2*t+1])
	}
	x.caughtUp(&s.follower)
}

// refresh updates s's tree after leaf slot p was rewritten.
func (x *Index) refresh(s *hotShape, p int) {
	t := x.leaves + p
	s.winner[t] = x.leafEntry(s, p)
	for t > 1 {
		t /= 2
		w := better(s.winner[2*t], s.winner[2*t+1])
		if w == s.winner[t] {
			return // nothing above depends on more than this
		}
		s.winner[t] = w
	}
}

// leafEntry is leaf slot p's tournament entry for s, read from the search
// tree's leaf (its group's vector, idle sum and representative).
func (x *Index) leafEntry(s *hotShape, p int) entry {
	t := x.leaves + p
	if x.first[t] == noNode || !x.maxFree(t).Fits(s.demand) {
		return none()
	}
	return entry{key: x.leafKey(t, s.weight), node: x.first[t]}
}

// better returns the better of two entries: the higher key, and on equal
// keys the lower node index. Keys are finite, so none() (key -Inf, node
// noNode) loses to any node, and two nones give none.
func better(a, b entry) entry {
	if b.key > a.key || b.key == a.key && b.node < a.node {
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
