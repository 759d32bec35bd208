package place

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// FuzzIndexMatchesScan drives an Index and the brute force (a scan of every
// node) through the same sequence of operations decoded from the fuzz input,
// and after every operation asks both for the best node for a few demands:
// they must agree exactly, ties to the lowest index included. It also checks
// the index's internal invariants after every operation (checkIndex).
//
// Capacities and demands are small multiples of 1/2 and every resource's
// largest capacity is a power of two, so every score is computed exactly and
// ties are real ties; with few node classes, twins are common.
//
// Input layout (fuzzOps): strategy, promote mode, a cluster, then operations
// of one op byte and its arguments. Bytes past the end read as zero.
func FuzzIndexMatchesScan(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runFuzzOps(t, data)
	})
}

// TestFuzzSeedsReachEveryOp guards the seed corpus: together the seeds must
// reach every operation and every way a Take moves a node between groups of
// twins, so the fuzz test run as a unit test covers them all.
func TestFuzzSeedsReachEveryOp(t *testing.T) {
	reached := map[string]int{}
	for _, seed := range fuzzSeeds() {
		for event, count := range runFuzzOps(t, seed) {
			reached[event] += count
		}
	}
	for _, event := range fuzzEvents {
		if reached[event] == 0 {
			t.Errorf("no seed reaches %q", event)
		}
	}
	t.Logf("events reached by the seeds: %v", reached)
}

// fuzzEvents are what the seeds must reach: operations, and the ways a Take
// moves a node between groups of twins (twins.go, take.go).
var fuzzEvents = []string{
	"best+take", "take any node", "take refused", "take ignored",
	"zero demand", "demand fits nowhere", "bad demand", "relayout",
	"reset", "bad reset", "promote 0", "promote 1", "promote max",
	"twin left its group", "representative left its group", "group emptied",
	"joined a new group", "joined an emptied group", "joined as a twin",
	"became the joined group's representative", "leaf handed over",
	"take grew the tree", "hot tree answered", "change log cut",
	"search tree left to rebuild",
}

// Op bytes. The op table maps op byte%32 to an operation, so Best+Take, the
// engine's common case, comes up most; bit 32 makes a take TryTake.
const (
	opBestTake = iota
	opTakeAny
	opTakeTwin
	opTakeRepresentative
	opTakeLoner
	opMoveTo
	opZero
	opNowhere
	opRelayout
	opReset
	opPromote
)

var opTable = [32]int{
	opBestTake, opBestTake, opBestTake, opTakeAny, opTakeAny, opTakeTwin,
	opTakeRepresentative, opTakeLoner, opMoveTo, opMoveTo, opZero, opNowhere,
	opRelayout, opReset, opPromote, opBestTake,
	opBestTake, opBestTake, opBestTake, opTakeAny, opTakeAny, opTakeTwin,
	opTakeRepresentative, opTakeLoner, opMoveTo, opMoveTo, opZero, opNowhere,
	opBestTake, opBestTake, opPromote, opBestTake,
}

// maxFuzzOps bounds the operations one input runs, so a long input costs at
// most a few milliseconds.
const maxFuzzOps = 1500

// fuzzBytes hands out the fuzz input a byte at a time, zeros once it is
// used up.
type fuzzBytes struct {
	data []byte
	at   int
}

func (b *fuzzBytes) next() byte {
	if b.at >= len(b.data) {
		b.at++
		return 0
	}
	b.at++
	return b.data[b.at-1]
}

func (b *fuzzBytes) done() bool { return b.at >= len(b.data) }

// quantities are the demand quantities a byte picks from (0 most often).
var quantities = [8]float64{0, 0, 0.5, 1, 1, 2, 3, 4}

// capacities are the per-class capacities a byte picks from; cluster raises
// a resource's largest to a power of two.
var capacities = [8]float64{0, 1, 2, 3, 4, 6, 8, 2}

// cluster decodes a cluster: resources, node classes and their capacities,
// the node count (1–64) and each node's class and how much of it is used.
func (b *fuzzBytes) cluster() cluster {
	k := [8]int{1, 2, 2, 3, 3, 3, 4, 0}[b.next()%8]
	classes := make([]ledger.Vector, 1+b.next()%4)
	for i := range classes {
		classes[i] = make(ledger.Vector, k)
		for j := range k {
			classes[i][j] = capacities[b.next()%8]
		}
	}
	n := 1 + int(b.next()%64)
	picks := make([]int, n)
	used := make([]bool, len(classes))
	for v := range picks {
		picks[v] = int(b.next())
		used[picks[v]%len(classes)] = true
	}
	for j := range k { // a power-of-two maximum keeps scores exact
		top := -1
		for i := range classes {
			if used[i] && (top < 0 || classes[i][j] > classes[top][j]) {
				top = i
			}
		}
		p := 1.0
		for p < classes[top][j] {
			p *= 2
		}
		if classes[top][j] > 0 {
			classes[top][j] = p
		}
	}
	c := cluster{capacity: make([]ledger.Vector, n), free: make([]ledger.Vector, n)}
	for v, x := range picks {
		cl := classes[x%len(classes)]
		c.capacity[v] = cl.Clone()
		free := cl.Clone()
		for j := range free {
			switch x / len(classes) % 4 { // 0, 1: idle
			case 2:
				free[j] = max(0, free[j]-1)
			case 3:
				free[j] /= 2
			}
		}
		c.free[v] = free
	}
	return c
}

// demand decodes a demand of k resources, one byte each.
func (b *fuzzBytes) demand(k int) ledger.Vector {
	d := make(ledger.Vector, k)
	for j := range d {
		d[j] = quantities[b.next()%8]
	}
	return d
}

// nodeDemand decodes a demand for a node: each resource either a quantity
// (which may not fit) or all the node has free of it.
func (b *fuzzBytes) nodeDemand(free ledger.Vector) ledger.Vector {
	d := make(ledger.Vector, len(free))
	for j := range d {
		x := b.next()
		d[j] = quantities[x%8]
		if x%16 >= 12 {
			d[j] = free[j]
		}
	}
	return d
}

// fuzzRun is one input's run: the index, the brute force beside it, and
// what the run has reached.
type fuzzRun struct {
	t        *testing.T
	in       *fuzzBytes
	x        *Index
	bf       *bruteForce
	capacity []ledger.Vector
	// seen lists every free vector a node has had since the last Reset,
	// in order of first appearance: the index keeps a group for each.
	seen    []ledger.Vector
	seenKey map[string]bool
	key     []byte // scratch for seenKey look-ups
	events  map[string]int
	// trace holds the last operations, formatted only for a failure
	// message (the vectors they name are never changed in place); ops
	// counts them all.
	trace []traceEntry
	ops   int
}

type traceEntry struct {
	format string
	args   []any
}

// traceLength is how many operations a failure message lists.
const traceLength = 30

// runFuzzOps runs the operations data encodes and returns how often each
// event (fuzzEvents) happened.
func runFuzzOps(t *testing.T, data []byte) map[string]int {
	t.Helper()
	in := &fuzzBytes{data: data}
	r := &fuzzRun{t: t, in: in, x: new(Index), events: map[string]int{}}
	s := Strategies()[in.next()%3]
	r.x.hot.promote = [4]int{0, 0, 1, math.MaxInt}[in.next()%4]
	r.reset(s, in.cluster())
	for step := 0; !in.done() && step < maxFuzzOps; step++ {
		changes, layouts := len(r.x.changes), r.x.layouts
		d := r.op(in.next())
		r.checkIndex()
		r.compareBest(d, in.next())
		r.checkIndex()
		if r.x.layouts == layouts && len(r.x.changes) < changes {
			r.events["change log cut"]++
		}
	}
	return r.events
}

func (r *fuzzRun) fail(format string, args ...any) {
	r.t.Helper()
	var ops strings.Builder
	for _, e := range r.trace {
		fmt.Fprintf(&ops, "\n  "+e.format, e.args...)
	}
	r.t.Fatalf("%s\nlast operations (of %d):%s", fmt.Sprintf(format, args...), r.ops, ops.String())
}

func (r *fuzzRun) note(format string, args ...any) {
	if len(r.trace) == traceLength {
		r.trace = append(r.trace[:0], r.trace[1:]...)
	}
	r.trace = append(r.trace, traceEntry{format, args})
	r.ops++
}

// reset resets the index to c for strategy s, and the brute force with it.
func (r *fuzzRun) reset(s Strategy, c cluster) {
	if err := r.x.Reset(s, c.capacity, c.free); err != nil {
		r.fail("Reset(%s, %d nodes): %v", s, len(c.free), err)
	}
	r.bf = newBruteForce(s, c)
	for j, m := range r.bf.scale {
		if _, e := math.Frexp(m); m != 0 && m != math.Ldexp(0.5, e) {
			r.fail("resource %d: the largest capacity %v is not a power of two, so scores would round", j, m)
		}
	}
	r.capacity = c.clone().capacity
	r.seen, r.seenKey = nil, map[string]bool{}
	for _, f := range r.bf.free {
		r.see(f)
	}
	r.note("Reset %s: capacity %v free %v", s, c.capacity, c.free)
}

// appendKey appends v's exact bits to b: seenKey's key for v.
func appendKey(b []byte, v []float64) []byte {
	for _, f := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// wasSeen reports whether a node has had free vector v since Reset.
func (r *fuzzRun) wasSeen(v []float64) bool {
	r.key = appendKey(r.key[:0], v)
	return r.seenKey[string(r.key)]
}

func (r *fuzzRun) see(f ledger.Vector) {
	if !r.wasSeen(f) {
		r.seenKey[string(r.key)] = true
		r.seen = append(r.seen, f.Clone())
	}
}

// op decodes and applies one operation, and returns a demand to compare
// Best on afterwards (nil for none).
func (r *fuzzRun) op(code byte) ledger.Vector {
	in, x, n, k := r.in, r.x, len(r.bf.free), r.x.k
	try := code&32 != 0 // TryTake rather than Take
	switch opTable[code%32] {
	case opBestTake:
		d := in.demand(k)
		node, ok := r.compare(d)
		r.note("Best+Take %v: node %d, %v", d, node, ok)
		if ok {
			r.take(node, d, try)
		}
		r.events["best+take"]++
		return d
	case opTakeAny:
		v := int(in.next()) % n
		d := in.nodeDemand(r.bf.free[v])
		r.take(v, d, try)
		r.events["take any node"]++
		return d
	case opTakeTwin, opTakeRepresentative, opTakeLoner:
		v := r.pickNode(opTable[code%32], in.next())
		d := in.nodeDemand(r.bf.free[v])
		r.take(v, d, try)
		return d
	case opMoveTo:
		return r.moveTo(in.next(), in.next(), try)
	case opZero:
		d := make(ledger.Vector, k)
		if node, ok := r.compare(d); ok {
			r.take(node, d, try)
		} else {
			r.fail("a zero demand fits nowhere on %d nodes", n)
		}
		r.take(int(in.next())%n, d, true)
		r.events["zero demand"]++
		return d
	case opNowhere:
		return r.nowhere(in.next())
	case opRelayout:
		r.note("relayout")
		x.relayout(-1)
		r.events["relayout"]++
	case opReset:
		b := in.next()
		if b%8 == 7 {
			r.badReset(b / 8)
			return nil
		}
		r.reset(Strategies()[b%3], in.cluster())
		r.events["reset"]++
	case opPromote:
		mode := in.next() % 3
		x.hot.promote = [3]int{0, 1, math.MaxInt}[mode]
		r.note("promote %d", x.hot.promote)
		r.events[[3]string{"promote 0", "promote 1", "promote max"}[mode]]++
	}
	return nil
}

// pickNode picks a node of the kind op asks for: a twin that does not
// represent its group, a representative of a group with twins, or a node
// without twins; any node when there is none of that kind.
func (r *fuzzRun) pickNode(op int, b byte) int {
	var nodes []int
	for v := range r.bf.free {
		members, lowest := r.members(r.bf.free[v])
		switch {
		case op == opTakeTwin && members > 1 && v != lowest,
			op == opTakeRepresentative && members > 1 && v == lowest,
			op == opTakeLoner && members == 1:
			nodes = append(nodes, v)
		}
	}
	if len(nodes) == 0 {
		return int(b) % len(r.bf.free)
	}
	return nodes[int(b)%len(nodes)]
}

// members counts the nodes whose free vector is f, and finds the lowest
// (-1 when none).
func (r *fuzzRun) members(f ledger.Vector) (count, lowest int) {
	lowest = -1
	for v, g := range r.bf.free {
		if slices.Equal(g, f) {
			if count == 0 {
				lowest = v
			}
			count++
		}
	}
	return count, lowest
}

// moveTo takes from a node exactly what brings it to a free vector seen
// before (its group may be empty now, or have members, or be the node's
// own): the way to reach an emptied group, or to join a group below its
// representative.
func (r *fuzzRun) moveTo(targetByte, nodeByte byte, try bool) ledger.Vector {
	target := r.seen[int(targetByte)%len(r.seen)]
	var nodes []int
	for v, f := range r.bf.free {
		if slices.Equal(f, target) {
			continue
		}
		above := true
		for j := range f {
			above = above && f[j] >= target[j]
		}
		if above {
			nodes = append(nodes, v)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	v := nodes[int(nodeByte)%len(nodes)]
	d := r.bf.free[v].Clone()
	d.Sub(target)
	r.take(v, d, try)
	return d
}

// take takes d from node v on the index (TryTake when try is set) and on
// the brute force when it fits, and counts what the Take did to the groups
// of twins.
func (r *fuzzRun) take(v int, d ledger.Vector, try bool) {
	x, bf := r.x, r.bf
	fits := bf.free[v].Fits(d)
	after := bf.free[v].Clone()
	after.Sub(d)
	moved := fits && !slices.Equal(after, bf.free[v])
	if moved {
		left, lowest := r.members(bf.free[v])
		joined, joinedLowest := r.members(after)
		switch {
		case left == 1:
			r.events["group emptied"]++
			if joined == 0 {
				r.events["leaf handed over"]++
			}
		case v == lowest:
			r.events["representative left its group"]++
		default:
			r.events["twin left its group"]++
		}
		switch {
		case joined == 0 && r.wasSeen(after):
			r.events["joined an emptied group"]++
		case joined == 0:
			r.events["joined a new group"]++
		case v < joinedLowest:
			r.events["became the joined group's representative"]++
		default:
			r.events["joined as a twin"]++
		}
	}
	layouts := x.layouts
	r.note("Take(try=%v) node %d free %v demand %v (fits %v)", try, v, bf.free[v], d, fits)
	if try {
		err := x.TryTake(v, d)
		if fits && err != nil {
			r.fail("TryTake(%d, %v) on free %v: %v", v, d, bf.free[v], err)
		}
		if !fits && err == nil {
			r.fail("TryTake(%d, %v) on free %v succeeded; the demand does not fit", v, d, bf.free[v])
		}
	} else {
		x.Take(v, d)
	}
	if !fits {
		r.events[map[bool]string{true: "take refused", false: "take ignored"}[try]]++
		return
	}
	bf.free[v] = after
	r.see(after)
	if x.layouts != layouts {
		if !moved {
			r.fail("a Take that changed no free vector laid the tree out afresh")
		}
		r.events["take grew the tree"]++
	}
}

// nowhere asks for a demand that fits no node (more of a resource than any
// node has) or is not a demand at all, and tries to take it.
func (r *fuzzRun) nowhere(b byte) ledger.Vector {
	k, n := r.x.k, len(r.bf.free)
	var d ledger.Vector
	switch {
	case b%2 == 0 && k > 0:
		d = make(ledger.Vector, k)
		j := int(b/2) % k
		d[j] = r.bf.scale[j] + 0.5 + quantities[b/8%8]
		r.events["demand fits nowhere"]++
	default:
		d = [4]ledger.Vector{
			make(ledger.Vector, k+1),
			append(make(ledger.Vector, k), -1)[1:],
			append(make(ledger.Vector, k), math.NaN())[1:],
			append(make(ledger.Vector, k), math.Inf(1))[1:],
		}[b/2%4]
		if k == 0 && b/2%4 != 0 {
			d = ledger.Vector{1}
		}
		r.events["bad demand"]++
	}
	r.note("demand that fits nowhere %v", d)
	if node, ok := r.x.Best(d); ok || node != -1 {
		r.fail("Best(%v) = %d, %v; want -1, false", d, node, ok)
	}
	v := int(b/16) % n
	if err := r.x.TryTake(v, d); err == nil {
		r.fail("TryTake(%d, %v) succeeded", v, d)
	}
	r.x.Take(v, d)
	if len(d) == k && admissible(d) {
		return d
	}
	return nil
}

// badReset tries a Reset the index must refuse, leaving it as it was.
func (r *fuzzRun) badReset(b byte) {
	x := r.x
	c := cluster{capacity: r.capacity, free: r.bf.free}.clone()
	s := x.Strategy()
	switch b % 4 {
	case 0:
		s = "firstfit"
	case 1:
		c.free = c.free[1:]
	case 2:
		if x.k > 0 {
			c.free[0][0] = c.capacity[0][0] + 1
		} else {
			c.free[0] = ledger.Vector{1}
		}
	case 3:
		if x.k > 0 {
			c.free[len(c.free)-1][0] = math.NaN()
		} else {
			c.capacity[0] = ledger.Vector{-1}
		}
	}
	r.note("bad Reset %d", b%4)
	n, strategy := x.Len(), x.Strategy()
	if err := x.Reset(s, c.capacity, c.free); err == nil {
		r.fail("Reset accepted bad input (case %d)", b%4)
	}
	if x.Len() != n || x.Strategy() != strategy {
		r.fail("a refused Reset changed the index: %d nodes, %s; was %d, %s", x.Len(), x.Strategy(), n, strategy)
	}
	r.events["bad reset"]++
}

// compare asks the index and the brute force for d's best node; they must
// agree exactly.
func (r *fuzzRun) compare(d ledger.Vector) (int, bool) {
	want, _, wantOK := r.bf.best(d)
	grants := r.x.hot.grants
	trees := len(r.x.hot.shapes)
	got, ok := r.x.Best(d)
	if got != want || ok != wantOK {
		r.fail("%s, demand %v: Best = %d, %v; a scan says %d, %v (free %v)", r.bf.strategy, d, got, ok, want, wantOK, r.bf.free)
	}
	if r.x.hot.grants == grants && len(r.x.hot.shapes) == trees && r.hasTree(d) {
		r.events["hot tree answered"]++
	}
	return got, ok
}

func (r *fuzzRun) hasTree(d ledger.Vector) bool {
	for i := range r.x.hot.shapes {
		if equal(r.x.hot.shapes[i].demand, d) {
			return true
		}
	}
	return false
}

// checkDemands are the demands compareBest draws from for k resources.
func checkDemands(k int) []ledger.Vector {
	ds := []ledger.Vector{make(ledger.Vector, k)}
	ones, halves, mixed := make(ledger.Vector, k), make(ledger.Vector, k), make(ledger.Vector, k)
	for j := range k {
		ones[j], halves[j], mixed[j] = 1, 0.5, float64(2-j%3)
	}
	ds = append(ds, ones, halves, mixed)
	for j := range k {
		unit := make(ledger.Vector, k)
		unit[j] = 1
		big := make(ledger.Vector, k)
		big[j] = 4
		ds = append(ds, unit, big)
	}
	return ds
}

// compareBest compares Best on d (unless nil) and on two demands b picks.
func (r *fuzzRun) compareBest(d ledger.Vector, b byte) {
	if d != nil {
		r.compare(d)
	}
	ds := checkDemands(r.x.k)
	r.compare(ds[int(b)%len(ds)])
	r.compare(ds[int(b/16)%len(ds)])
}

// checkIndex checks the index against the brute force and its own
// invariants.
func (r *fuzzRun) checkIndex() {
	r.checkTwins()
	r.checkSlots()
	r.checkSearchTree()
	r.checkHotTrees()
}

// checkTwins: every node's group holds its free vector; groups have distinct
// vectors, one for each vector seen since Reset, all found by the hash
// table; a group's heap holds each member once, in heap order.
func (r *fuzzRun) checkTwins() {
	x, tw := r.x, &r.x.twins
	n := len(r.bf.free)
	if x.Len() != n {
		r.fail("Len = %d, want %d", x.Len(), n)
	}
	if tw.groups != len(r.seen) {
		r.fail("%d groups of twins, but nodes have had %d distinct free vectors since Reset", tw.groups, len(r.seen))
	}
	for v := range n {
		if !slices.Equal(x.Free(v), r.bf.free[v]) {
			r.fail("node %d: free %v in the index, want %v", v, x.Free(v), r.bf.free[v])
		}
		g := tw.group[v]
		if g < 0 || int(g) >= tw.groups || !equal(x.groupVector(g), r.bf.free[v]) {
			r.fail("node %d (free %v) is in group %d of %d", v, r.bf.free[v], g, tw.groups)
		}
	}
	occupied := 0
	for _, s := range tw.table {
		if s.group >= 0 {
			occupied++
		}
	}
	if occupied != tw.groups || 2*tw.groups > len(tw.table) || len(tw.table)&(len(tw.table)-1) != 0 {
		r.fail("twin table of %d slots holds %d groups, want %d", len(tw.table), occupied, tw.groups)
	}
	type span struct{ at, end int32 }
	var spans []span
	members := make([]int, tw.groups)
	for v := range n {
		members[tw.group[v]]++
	}
	// mark[v] is g+1 once group g's heap listed v, to find it listed twice.
	mark := make([]int32, n)
	for g := range int32(tw.groups) {
		// Two groups with one vector would have the table find the
		// same group for both: one of them fails here.
		if found := r.lookup(g); found != g {
			r.fail("the twin table finds group %d for group %d's vector %v", found, g, x.groupVector(g))
		}
		if !r.wasSeen(x.groupVector(g)) {
			r.fail("group %d holds %v, which no node has had since Reset", g, x.groupVector(g))
		}
		h := tw.heaps[g]
		if h.at < 0 || h.len < 0 || h.len > h.size || int(h.at+h.size) > len(tw.arena) {
			r.fail("group %d heap %+v outside arena of %d", g, h, len(tw.arena))
		}
		if h.size > 0 {
			spans = append(spans, span{h.at, h.at + h.size})
		}
		heap := tw.arena[h.at : h.at+h.len]
		listed := 0
		for i, v := range heap {
			if i > 0 && heap[(i-1)/2] > v {
				r.fail("group %d heap %v is out of order at %d", g, heap, i)
			}
			if v < 0 || int(v) >= n || mark[v] == g+1 {
				r.fail("group %d heap %v holds node %d twice or out of range", g, heap, v)
			}
			mark[v] = g + 1
			if tw.group[v] == g {
				listed++
			}
		}
		if listed != members[g] {
			r.fail("group %d has %d members but its heap %v lists %d of them", g, members[g], heap, listed)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.at - b.at) })
	for i := 1; i < len(spans); i++ {
		if spans[i].at < spans[i-1].end {
			r.fail("two groups' heaps overlap in the arena: %v", spans)
		}
	}
}

// lookup finds group g's vector in the twin table without changing it.
func (r *fuzzRun) lookup(g int32) int32 {
	tw := &r.x.twins
	f := r.x.groupVector(g)
	hash := hashDemand(f)
	mask := len(tw.table) - 1
	for i, probes := int(hash)&mask, 0; tw.table[i].group >= 0 && probes < len(tw.table); i, probes = (i+1)&mask, probes+1 {
		s := tw.table[i]
		if s.hash == hash && equal(r.x.groupVector(s.group), f) {
			return s.group
		}
	}
	return -1
}

// checkSlots: every group with members has exactly one leaf slot and bySlot
// and slotOf agree; empty groups have none; the other slots are free and
// hold padding; each live leaf holds its group's vector, idle sum and lowest
// member.
func (r *fuzzRun) checkSlots() {
	x, tw := r.x, &r.x.twins
	k := x.k
	lowest := make([]int32, tw.groups)
	for g := range lowest {
		lowest[g] = noNode
	}
	for v := len(r.bf.free) - 1; v >= 0; v-- {
		lowest[tw.group[v]] = int32(v)
	}
	if x.leaves < 1 || x.leaves&(x.leaves-1) != 0 || len(x.bySlot) != x.leaves {
		r.fail("%d leaves, %d slots: want a power of two of each, equal", x.leaves, len(x.bySlot))
	}
	live := 0
	for g := range int32(tw.groups) {
		p := tw.slotOf[g]
		switch {
		case lowest[g] == noNode && p != -1:
			r.fail("group %d has no members but leaf slot %d", g, p)
		case lowest[g] == noNode:
		case p < 0 || int(p) >= x.leaves || x.bySlot[p] != g:
			r.fail("group %d (lowest member %d) has slot %d, which holds group %d", g, lowest[g], p, r.slotHolds(p))
		default:
			live++
		}
	}
	for p, g := range x.bySlot {
		if g < -1 || int(g) >= tw.groups || g >= 0 && int(tw.slotOf[g]) != p {
			r.fail("slot %d holds group %d, whose slot is %d", p, g, r.slotOf(g))
		}
	}
	free := map[int32]bool{}
	for _, p := range x.freeSlots {
		if p < 0 || int(p) >= x.leaves || x.bySlot[p] != -1 || free[p] {
			r.fail("free slots %v: slot %d is out of range, in use (group %d) or listed twice", x.freeSlots, p, r.slotHolds(p))
		}
		free[p] = true
	}
	if len(x.freeSlots)+live != x.leaves {
		r.fail("%d free slots and %d groups with members, but %d leaves", len(x.freeSlots), live, x.leaves)
	}
	for p, g := range x.bySlot {
		t := x.leaves + p
		hi, lo := x.hi[t*k:t*k+k], x.lo[t*k:t*k+k]
		if g < 0 {
			padding := x.first[t] == noNode && x.hiTie[t] == noNode && x.loTie[t] == noNode &&
				x.hiIdle[t] == math.Inf(-1) && x.loIdle[t] == math.Inf(1)
			for j := range k {
				padding = padding && hi[j] == math.Inf(-1) && lo[j] == math.Inf(1)
			}
			if !padding {
				r.fail("free slot %d does not hold padding: first %d hi %v lo %v", p, x.first[t], hi, lo)
			}
			continue
		}
		f := x.groupVector(g)
		idle := x.idle(f)
		if x.first[t] != lowest[g] || x.hiTie[t] != lowest[g] || x.loTie[t] != lowest[g] {
			r.fail("slot %d (group %d) names node %d (ties %d, %d), but its lowest member is %d", p, g, x.first[t], x.hiTie[t], x.loTie[t], lowest[g])
		}
		if !equal(hi, f) || !equal(lo, f) || x.hiIdle[t] != idle || x.loIdle[t] != idle {
			r.fail("slot %d (group %d, free %v) holds hi %v lo %v idle %v %v", p, g, f, hi, lo, x.hiIdle[t], x.loIdle[t])
		}
	}
}

// slotHolds is the group in slot p, for failure messages (-2: no slot p).
func (r *fuzzRun) slotHolds(p int32) int32 {
	if p < 0 || int(p) >= len(r.x.bySlot) {
		return -2
	}
	return r.x.bySlot[p]
}

// slotOf is group g's slot, for failure messages (-2: no group g).
func (r *fuzzRun) slotOf(g int32) int32 {
	if g < 0 || int(g) >= len(r.x.twins.slotOf) {
		return -2
	}
	return r.x.twins.slotOf[g]
}

// checkSearchTree: every inner node the change log does not mark stale (an
// ancestor of a leaf rewritten since the last search) holds what its
// children make of it, in the fields the strategy reads (pull).
func (r *fuzzRun) checkSearchTree() {
	x := r.x
	k := x.k
	if len(x.dirty) > x.rebuildAfter() {
		r.events["search tree left to rebuild"]++
		return // the next search rebuilds every inner node
	}
	stale := make([]bool, x.leaves)
	for _, leaf := range x.dirty {
		if int(leaf) < x.leaves || int(leaf) >= 2*x.leaves {
			r.fail("dirty leaf %d outside [%d, %d)", leaf, x.leaves, 2*x.leaves)
		}
		for t := leaf / 2; t >= 1; t /= 2 {
			stale[t] = true
		}
	}
	for t := 1; t < x.leaves; t++ {
		if stale[t] {
			continue
		}
		l, rt := 2*t, 2*t+1
		ok := x.first[t] == min(x.first[l], x.first[rt])
		for j := range k {
			ok = ok && x.hi[t*k+j] == max(x.hi[l*k+j], x.hi[rt*k+j])
		}
		switch x.kind {
		case kindSpread:
			want, tie := x.hiIdle[l], x.hiTie[l]
			switch {
			case x.hiIdle[rt] > want:
				want, tie = x.hiIdle[rt], x.hiTie[rt]
			case x.hiIdle[rt] == want:
				tie = min(tie, x.hiTie[rt])
			}
			ok = ok && x.hiIdle[t] == want && x.hiTie[t] == tie
		case kindBestFit:
			for j := range k {
				ok = ok && x.lo[t*k+j] == min(x.lo[l*k+j], x.lo[rt*k+j])
			}
			want, tie := x.loIdle[l], x.loTie[l]
			switch {
			case x.loIdle[rt] < want:
				want, tie = x.loIdle[rt], x.loTie[rt]
			case x.loIdle[rt] == want:
				tie = min(tie, x.loTie[rt])
			}
			ok = ok && x.loIdle[t] == want && x.loTie[t] == tie
		}
		if !ok {
			r.fail("search tree node %d (of %d leaves, dirty %v) disagrees with its children", t, x.leaves, x.dirty)
		}
	}
}

// checkHotTrees: hot trees have distinct demands, and a tree that is fresh
// holds, for every leaf slot not rewritten since its last catch-up, the
// slot's entry, and above, the better of its children's winners.
func (r *fuzzRun) checkHotTrees() {
	x := r.x
	for _, p := range x.changes {
		if p < 0 || int(p) >= x.leaves {
			r.fail("change log %v names a slot outside %d leaves", x.changes, x.leaves)
		}
	}
	for i := range x.hot.shapes {
		s := &x.hot.shapes[i]
		for j := range i {
			if equal(x.hot.shapes[j].demand, s.demand) {
				r.fail("trees %d and %d are both for demand %v", j, i, s.demand)
			}
		}
		if !s.fresh {
			continue
		}
		if s.applied > len(x.changes) || len(s.winner) != 2*x.leaves {
			r.fail("tree for %v applied %d of %d changes, has %d entries for %d leaves", s.demand, s.applied, len(x.changes), len(s.winner), x.leaves)
		}
		pending := make([]bool, 2*x.leaves)
		for _, p := range x.changes[s.applied:] {
			for t := x.leaves + int(p); t >= 1; t /= 2 {
				pending[t] = true
			}
		}
		for p := range x.leaves {
			if t := x.leaves + p; !pending[t] && s.winner[t] != x.leafEntry(s, p) {
				r.fail("tree for %v: slot %d holds %+v, the leaf says %+v", s.demand, p, s.winner[t], x.leafEntry(s, p))
			}
		}
		for t := 1; t < x.leaves; t++ {
			if !pending[t] && s.winner[t] != better(s.winner[2*t], s.winner[2*t+1]) {
				r.fail("tree for %v: node %d holds %+v, its children %+v and %+v", s.demand, t, s.winner[t], s.winner[2*t], s.winner[2*t+1])
			}
		}
	}
}

// fuzzSeeds are the seed corpus: a few hand-made inputs, each aimed at some
// operations, and a few pseudo-random ones that mix them all. Every op is
// followed by its argument bytes and the byte compareBest reads.
func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		{
			0, 0, // affinity, promote 0
			1, 0, 4, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, // 8 idle nodes {4, 8}
			5, 3, 3, 3, 0x00, // the twin node 4 takes {1, 1}: a new group
			6, 0, 3, 5, 0x12, // the representative node 0 takes {1, 2}
			7, 1, 0, 3, 0x34, // the lone node 4 takes {0, 1}: joins node 0, empties its group
			8, 1, 2, 0x56, // node 3 moves to {3, 7}: the emptied group
			0, 3, 3, 0x71, // Best+Take {1, 1}
			3, 5, 12, 12, 0x23, // node 5 takes all it has
			8, 1, 0, 0x45, // node 1 moves to {3, 7}, below node 3: its representative
			12, 0x67, // relayout
			10, 2, 0x10, // a zero demand
		},
		{
			1, 2, // best-fit, every asked demand gets a hot tree
			3, 1, 4, 6, 0, 2, 4, 1, // 3 resources, classes {4, 8, 0} and {2, 4, 1}
			11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, // 12 nodes, partly used
			0, 3, 3, 0, 0x10, // Best+Take {1, 1, 0}
			10, 5, 0x23, // a zero demand, and node 5 takes it
			11, 0, 0x45, // more cpu than any node has
			11, 4, 0x67, // more mic than any node has
			11, 3, 0x01, // a negative demand
			11, 5, 0x02, // NaN
			11, 7, 0x03, // +Inf
			11, 1, 0x04, // the wrong length
			4, 2, 7, 7, 0, 0x12, // node 2 takes {4, 4, 0}
			36, 1, 7, 7, 7, 0x34, // TryTake {4, 4, 4} on node 1: refused
			4, 1, 7, 7, 7, 0x35, // Take {4, 4, 4} on node 1: ignored
			3, 9, 12, 12, 12, 0x56, // node 9 takes all it has
			12, 0x78, // relayout
			0, 2, 2, 2, 0x56, // Best+Take {0.5, 0.5, 0.5}
			14, 0, 0x9a, // promote 0
			0, 3, 3, 0, 0x10,
			14, 2, 0xbc, // promote max: searches only
			0, 3, 3, 0, 0x10,
			14, 1, 0xde, // promote 1: trees again
			0, 3, 3, 0, 0x10,
		},
		{
			2, 3, // spread, searches only
			0, 0, 3, 4, 0, 1, 2, 3, 4, // 1 resource, 5 nodes of capacity 4
			13, 7, 0x00, // refused Resets: an unknown strategy,
			13, 15, 0x00, // fewer free vectors than capacities,
			13, 23, 0x00, // free above capacity,
			13, 31, 0x00, // a NaN free quantity
			13, 1, // Reset to best-fit on a new cluster:
			6, 2, 6, 5, 0, 1, 4, 6, 1, 0, 2, 3, 0, 0, // 4 resources, 3 classes
			9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x11, // 10 nodes
			0, 3, 3, 0, 0, 0x11, // Best+Take {1, 1, 0, 0}
			14, 1, 0x22, // promote 1
			0, 3, 3, 0, 0, 0x11,
			0, 3, 3, 0, 0, 0x11,
			14, 0, 0x33, // promote 0
			13, 2, 7, 0, 5, 0, 0, 0, 0, 0, 0, 0x44, // Reset to 6 nodes of no resources
			0, 0x00, // Best+Take of the empty demand
			11, 1, 0x00, // a demand of the wrong length
			13, 23, 0x00, // a refused Reset
		},
	}
	// Best-fit filling 64 idle nodes {8, 8} half a unit at a time, with
	// hot trees: no layout for hundreds of Takes, so the change log is cut
	// and the search tree falls behind. The tree for {1, 1}, asked for
	// every 20 Takes, is behind when the log is cut; the one for
	// {0.5, 0.5}, asked for only at the start and the end, falls too far
	// behind to catch up.
	long := []byte{1, 2, 1, 0, 6, 6, 63}
	long = append(long, make([]byte, 64)...)
	for i := range 300 {
		check := byte(0x00) // the zero demand
		switch {
		case i == 1 || i == 299:
			check = 0x22
		case i%20 == 0:
			check = 0x11
		}
		long = append(long, opBestTake, 2, 2, check)
	}
	seeds = append(seeds, long)
	// Random mixes, long enough to grow the tree, cut the change log and
	// age hot trees.
	for i, size := range []int{300, 900, 1600} {
		rng := rand.New(rand.NewPCG(uint64(i), 41))
		seed := make([]byte, size)
		for j := range seed {
			seed[j] = byte(rng.UintN(256))
		}
		seed[0], seed[1] = byte(i), byte(i+2)
		seeds = append(seeds, seed)
	}
	return seeds
}
