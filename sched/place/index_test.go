package place

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// replay runs steps Best+Take rounds on the index and the brute force side by
// side. When exact is set, both must choose the same node every time (ties to
// the lowest index included); otherwise, where rounding makes two nodes'
// scores differ only in their last bits, the index may choose either, and the
// score it chose must equal the best within 1e-12. It returns how many
// placements were made and how many of those went to a near-tied node.
func replay(t *testing.T, x *Index, bf *bruteForce, rng *rand.Rand, shapes []ledger.Vector, steps int, exact bool) (placed, nearTies int) {
	t.Helper()
	return replayWith(t, x, bf, rng, shapes, steps, exact, nil)
}

// replayWith is replay calling between (when not nil) before every step.
func replayWith(t *testing.T, x *Index, bf *bruteForce, rng *rand.Rand, shapes []ledger.Vector, steps int, exact bool, between func(step int)) (placed, nearTies int) {
	t.Helper()
	for step := range steps {
		if between != nil {
			between(step)
		}
		d := shapes[rng.IntN(len(shapes))]
		want, wantScore, wantOK := bf.best(d)
		got, ok := x.Best(d)
		if ok != wantOK {
			t.Fatalf("step %d, demand %v: index says fits=%v (node %d), brute force says fits=%v (node %d)", step, d, ok, got, wantOK, want)
		}
		if !ok {
			if got != -1 {
				t.Fatalf("step %d: Best returned node %d with ok=false, want -1", step, got)
			}
			continue
		}
		if got != want {
			if exact {
				t.Fatalf("step %d, %s, demand %v: index chose node %d (score %v, free %v), brute force node %d (score %v, free %v)",
					step, bf.strategy, d, got, bf.score(got, d), bf.free[got], want, wantScore, bf.free[want])
			}
			if !bf.free[got].Fits(d) {
				t.Fatalf("step %d: index chose node %d where demand %v does not fit (free %v)", step, got, d, bf.free[got])
			}
			if s := bf.score(got, d); math.Abs(s-wantScore) > 1e-12*(1+math.Abs(wantScore)) {
				t.Fatalf("step %d, %s, demand %v: index chose node %d scoring %v, brute force node %d scoring %v", step, bf.strategy, d, got, s, want, wantScore)
			}
			nearTies++
		}
		x.Take(got, d)
		bf.free[got].Sub(d)
		if !slices.Equal(x.Free(got), bf.free[got]) {
			t.Fatalf("step %d: after Take node %d has free %v in the index, want %v", step, got, x.Free(got), bf.free[got])
		}
		placed++
	}
	return placed, nearTies
}

// searchModes are the ways Best can answer: by whichever path it picks, only
// by branch-and-bound search, only from per-demand tournament trees.
var searchModes = []struct {
	name    string
	promote int
}{{"mixed", 0}, {"search", math.MaxInt}, {"trees", 1}}

func TestBestMatchesBruteForceExactly(t *testing.T) {
	for _, mode := range searchModes {
		for _, s := range Strategies() {
			for _, n := range []int{1, 2, 3, 5, 8, 17, 64, 300} {
				t.Run(fmt.Sprintf("%s/%s/%d", mode.name, s, n), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(n), 7))
					c := newCluster(rng, n, dyadicClasses, 0.7, true)
					x, err := NewIndex(s, c.capacity, c.free)
					if err != nil {
						t.Fatal(err)
					}
					x.hot.promote = mode.promote
					// Enough steps to fill the cluster, so the end of the
					// sequence asks mostly for demands that fit nowhere.
					placed, _ := replay(t, x, newBruteForce(s, c), rng, dyadicShapes, 60*n+100, true)
					if placed == 0 {
						t.Fatal("no task was placed: the test exercises nothing")
					}
				})
			}
		}
	}
}

func TestBestMatchesBruteForceOnRealUnits(t *testing.T) {
	for _, mode := range searchModes {
		for _, s := range Strategies() {
			for seed := range uint64(3) {
				t.Run(fmt.Sprintf("%s/%s/seed%d", mode.name, s, seed), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(seed, 11))
					n := 50 + rng.IntN(200)
					c := newCluster(rng, n, realClasses, 0.8, false)
					x, err := NewIndex(s, c.capacity, c.free)
					if err != nil {
						t.Fatal(err)
					}
					x.hot.promote = mode.promote
					placed, near := replay(t, x, newBruteForce(s, c), rng, realShapes, 40*n, false)
					if placed == 0 {
						t.Fatal("no task was placed: the test exercises nothing")
					}
					// Near ties are a rounding artefact and must stay rare.
					if near*100 > placed {
						t.Fatalf("%d of %d placements went to a node that only ties the best within rounding", near, placed)
					}
					if near > 0 {
						t.Logf("%d of %d placements went to a node tied with the best within rounding", near, placed)
					}
				})
			}
		}
	}
}

// TestMoreDemandsThanTrees asks for many more distinct demands than the
// index keeps trees for, so trees are handed from demand to demand.
func TestMoreDemandsThanTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	var shapes []ledger.Vector
	for range 3 * maxHot {
		shapes = append(shapes, ledger.Vector{float64(1 + rng.IntN(4)), float64(1 + rng.IntN(16)), float64(rng.IntN(2)), 0})
	}
	for _, s := range Strategies() {
		c := newCluster(rng, 200, dyadicClasses, 0.2, true)
		x, err := NewIndex(s, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		x.hot.promote = 1
		// Let the counts age many times so trees change hands.
		placed, _ := replay(t, x, newBruteForce(s, c), rng, shapes, 3*agePeriod, true)
		if placed == 0 {
			t.Fatal("no task was placed: the test exercises nothing")
		}
		if len(x.hot.shapes) != maxHot {
			t.Fatalf("%d trees in use, want all %d", len(x.hot.shapes), maxHot)
		}
	}
}

// TestTreesAreNotThrashed: demands asked for in turn, more of them than
// trees, must not get trees built over and over. Every tree given must have been
// paid for by searches for its demand (rent or buy), and no demand gets a
// tree more than a few times.
func TestTreesAreNotThrashed(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	var shapes []ledger.Vector
	for i := range 3 * maxHot {
		shapes = append(shapes, ledger.Vector{1 + float64(i%4), 1 + float64(i/4), 0, 0})
	}
	for _, used := range []float64{0, 0.6} {
		c := newCluster(rng, 4000, dyadicClasses, used, true)
		x, err := NewIndex(Affinity, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20000 {
			d := shapes[i%len(shapes)]
			if node, ok := x.Best(d); ok {
				x.Take(node, d)
			}
		}
		h := &x.hot
		if h.grants*x.promoteVisits() > h.searched {
			t.Errorf("used %v: %d trees given, each worth %d search visits, but searches only visited %d", used, h.grants, x.promoteVisits(), h.searched)
		}
		if h.grants > 3*len(shapes) {
			t.Errorf("used %v: %d trees given to %d demands asked for in turn: trees are thrashed", used, h.grants, len(shapes))
		}
		t.Logf("used %v: %d trees given, %d search visits", used, h.grants, h.searched)
	}
}

// TestLongIdleStructuresCatchUp: a demand's tree left unused while many
// Takes go by, and the search tree left behind while every demand is served
// from trees, must both come back correct.
func TestLongIdleStructuresCatchUp(t *testing.T) {
	a, b, c := ledger.Vector{1, 2, 0, 0}, ledger.Vector{1, 4, 0, 0}, ledger.Vector{2, 8, 0, 0}
	for _, s := range Strategies() {
		// Idle spells of many lengths, so the change log is cut at every
		// point relative to the idle structures' last catch-up.
		for idle := 100; idle < 400; idle += 13 {
			rng := rand.New(rand.NewPCG(12, uint64(idle)))
			cl := newCluster(rng, 128, dyadicClasses, 0.3, true)
			x, err := NewIndex(s, cl.capacity, cl.free)
			if err != nil {
				t.Fatal(err)
			}
			bf := newBruteForce(s, cl)
			replay(t, x, bf, rng, []ledger.Vector{a, b}, 20, true)     // a and b get trees
			replay(t, x, bf, rng, []ledger.Vector{b}, idle, true)      // a's tree and the search tree fall behind
			replay(t, x, bf, rng, []ledger.Vector{c}, 1, true)         // c is searched
			replay(t, x, bf, rng, []ledger.Vector{a, b, c}, 100, true) // a catches up, c gets a tree
		}
	}
}

func TestZeroNodes(t *testing.T) {
	for _, s := range Strategies() {
		x, err := NewIndex(s, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if x.Len() != 0 {
			t.Fatalf("Len = %d, want 0", x.Len())
		}
		if node, ok := x.Best(ledger.Vector{}); ok || node != -1 {
			t.Fatalf("Best on no nodes = %d, %v; want -1, false", node, ok)
		}
		x.Take(0, ledger.Vector{}) // must not panic
		if x.Free(0) != nil {
			t.Fatal("Free(0) on no nodes is not nil")
		}
		if err := x.TryTake(0, ledger.Vector{}); err == nil {
			t.Fatal("TryTake on no nodes succeeded")
		}
	}
	var zero Index
	if _, ok := zero.Best(ledger.Vector{1}); ok || zero.Len() != 0 {
		t.Fatal("the zero Index is not empty")
	}
}

// exampleCluster: node 0 {cpu 8, mem 64} free {2, 60}; node 1 {16, 32} free
// {12, 4}; node 2 {16, 64} free {16, 64}; node 3 {8, 32} free {1, 1}.
func exampleCluster() cluster {
	return cluster{
		capacity: []ledger.Vector{{8, 64}, {16, 32}, {16, 64}, {8, 32}},
		free:     []ledger.Vector{{2, 60}, {12, 4}, {16, 64}, {1, 1}},
	}
}

func TestZeroDemand(t *testing.T) {
	c := exampleCluster()
	// A zero demand fits everywhere. Its affinity is 0 on every node, so
	// the lowest index wins; spread takes the idlest node (2), best-fit the
	// fullest (3).
	for s, want := range map[Strategy]int{Affinity: 0, Spread: 2, BestFit: 3} {
		x, err := NewIndex(s, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		if node, ok := x.Best(ledger.Vector{0, 0}); !ok || node != want {
			t.Errorf("%s: Best(0) = %d, %v; want %d", s, node, ok, want)
		}
	}
}

func TestDemandLargerThanEveryNode(t *testing.T) {
	c := exampleCluster()
	for _, s := range Strategies() {
		x, err := NewIndex(s, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []ledger.Vector{{17, 1}, {1, 65}, {math.MaxFloat64, 0}} {
			if node, ok := x.Best(d); ok || node != -1 {
				t.Errorf("%s: Best(%v) = %d, %v; want -1, false", s, d, node, ok)
			}
		}
		// Without the idle node 2, {3, 5} is below the cluster's max free
		// vector {12, 60} yet fits no node: node 0 lacks cpu, node 1 mem.
		busy := cluster{capacity: c.capacity[:2], free: c.free[:2]}
		if err := x.Reset(s, busy.capacity, busy.free); err != nil {
			t.Fatal(err)
		}
		if node, ok := x.Best(ledger.Vector{3, 5}); ok || node != -1 {
			t.Errorf("%s: Best({3, 5}) = %d, %v; want -1, false", s, node, ok)
		}
	}
}

func TestMicTasksLandOnlyOnMicNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	c := newCluster(rng, 200, dyadicClasses, 0, true) // all idle
	totalMic := 0.0
	for _, cp := range c.capacity {
		totalMic += cp[2]
	}
	micTask := ledger.Vector{0, 0, 1, 0}
	for _, s := range Strategies() {
		x, err := NewIndex(s, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		placed := 0
		for {
			node, ok := x.Best(micTask)
			if !ok {
				break
			}
			if c.capacity[node][2] == 0 {
				t.Fatalf("%s: a mic task went to node %d, which has no mic", s, node)
			}
			x.Take(node, micTask)
			placed++
			if placed > int(totalMic) {
				t.Fatalf("%s: placed more mic tasks than the cluster has mic devices (%v)", s, totalMic)
			}
		}
		if placed != int(totalMic) {
			t.Fatalf("%s: placed %d mic tasks on %v mic devices", s, placed, totalMic)
		}
	}
}

// TestTiesGoToLowestIndex: the index groups nodes by capacity, so the node
// with the lowest index need not come first in its tree. Nodes 0–2 have the
// same free vector under different capacities.
func TestTiesGoToLowestIndex(t *testing.T) {
	capacity := []ledger.Vector{{8, 8}, {16, 16}, {8, 8}, {16, 16}}
	free := []ledger.Vector{{4, 4}, {4, 4}, {4, 4}, {2, 2}}
	for _, s := range Strategies() {
		x, err := NewIndex(s, capacity, free)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if s == BestFit {
			want = 3
		}
		if node, _ := x.Best(ledger.Vector{1, 1}); node != want {
			t.Errorf("%s: Best = %d, want %d", s, node, want)
		}
		x.Take(0, ledger.Vector{1, 0})
		if s != BestFit {
			want = 1 // node 0 now has less idle cpu
			if node, _ := x.Best(ledger.Vector{1, 1}); node != want {
				t.Errorf("%s after Take: Best = %d, want %d", s, node, want)
			}
		}
	}
}

func TestResetReusesMemoryAndMatchesNewIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	big := newCluster(rng, 400, dyadicClasses, 0.5, true)
	small := newCluster(rng, 37, dyadicClasses, 0.5, true)
	for _, s := range Strategies() {
		reused, err := NewIndex(s, big.capacity, big.free)
		if err != nil {
			t.Fatal(err)
		}
		// Disturb it, then reset to another cluster and compare with a
		// fresh index over a long sequence.
		for range 100 {
			if node, ok := reused.Best(dyadicShapes[0]); ok {
				reused.Take(node, dyadicShapes[0])
			}
		}
		for _, c := range []cluster{small, big} {
			if err := reused.Reset(s, c.capacity, c.free); err != nil {
				t.Fatal(err)
			}
			fresh, err := NewIndex(s, c.capacity, c.free)
			if err != nil {
				t.Fatal(err)
			}
			seq := rand.New(rand.NewPCG(9, 9))
			for step := range 30 * len(c.free) {
				d := dyadicShapes[seq.IntN(len(dyadicShapes))]
				a, aok := reused.Best(d)
				b, bok := fresh.Best(d)
				if a != b || aok != bok {
					t.Fatalf("%s step %d: reset index says %d,%v; new index %d,%v", s, step, a, aok, b, bok)
				}
				if aok {
					reused.Take(a, d)
					fresh.Take(b, d)
				}
			}
		}
		// Reset must not have kept the caller's vectors.
		c := big.clone()
		if err := reused.Reset(s, c.capacity, c.free); err != nil {
			t.Fatal(err)
		}
		c.free[0][0] = 0
		if reused.Free(0)[0] != big.free[0][0] {
			t.Fatal("the index shares memory with the caller's free vectors")
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := reused.Reset(s, big.capacity, big.free); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Reset of a same-size cluster allocates %v times", s, allocs)
		}
	}
}

func TestBestAndTakeDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	c := newCluster(rng, 500, realClasses, 0.3, false)
	const steps = 400
	for _, mode := range searchModes {
		for _, s := range Strategies() {
			x, err := NewIndex(s, c.capacity, c.free)
			if err != nil {
				t.Fatal(err)
			}
			x.hot.promote = mode.promote
			i := 0
			step := func() {
				d := realShapes[i%len(realShapes)]
				i++
				if node, ok := x.Best(d); ok {
					x.Take(node, d)
				}
			}
			// AllocsPerRun's warm-up pass sizes every buffer (trees,
			// twin groups); the same pass again, after Reset, must reuse
			// them. It averages over runs, so a stray allocation by the
			// runtime during one pass (a GC cycle left over from an
			// earlier test) does not fail the test, while one made in
			// every pass does.
			allocs := testing.AllocsPerRun(10, func() {
				if err := x.Reset(s, c.capacity, c.free); err != nil {
					t.Fatal(err)
				}
				i = 0
				for range steps {
					step()
				}
			})
			if allocs != 0 {
				t.Errorf("%s/%s: Reset and %d Best+Take calls allocated %v times per pass", mode.name, s, steps, allocs)
			}
		}
	}
}

// TestRelayoutKeepsAnswers rearranges the search tree every few steps: the
// layout must change only speed, never which node Best picks.
func TestRelayoutKeepsAnswers(t *testing.T) {
	for _, s := range Strategies() {
		rng := rand.New(rand.NewPCG(8, 8))
		c := newCluster(rng, 150, dyadicClasses, 0.6, true)
		x, err := NewIndex(s, c.capacity, c.free)
		if err != nil {
			t.Fatal(err)
		}
		x.hot.promote = math.MaxInt
		replayWith(t, x, newBruteForce(s, c), rng, dyadicShapes, 5000, true, func(step int) {
			if step%5 == 4 {
				x.relayout(-1)
			}
		})
	}
}

// TestTwinsStayExactWhenTakesLandAnywhere starts from idle nodes of a few
// classes, so most nodes are twins and only one of each group is live in the
// search tree, then takes from random nodes as well as from Best's choices:
// a Take on a twin that is not its group's lowest index, or on the lowest,
// must leave every answer the one a scan of all nodes gives.
func TestTwinsStayExactWhenTakesLandAnywhere(t *testing.T) {
	for _, mode := range searchModes {
		for _, s := range Strategies() {
			t.Run(mode.name+"/"+string(s), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(21, 5))
				c := newCluster(rng, 200, dyadicClasses, 0, true)
				x, err := NewIndex(s, c.capacity, c.free)
				if err != nil {
					t.Fatal(err)
				}
				x.hot.promote = mode.promote
				if x.twins.groups != len(dyadicClasses) {
					t.Fatalf("%d groups of twins among idle nodes of %d classes", x.twins.groups, len(dyadicClasses))
				}
				bf := newBruteForce(s, c)
				elsewhere := 0
				replayWith(t, x, bf, rng, dyadicShapes, 3000, true, func(int) {
					node, d := rng.IntN(len(bf.free)), dyadicShapes[rng.IntN(len(dyadicShapes))]
					if !bf.free[node].Fits(d) {
						return
					}
					if err := x.TryTake(node, d); err != nil {
						t.Fatal(err)
					}
					bf.free[node].Sub(d)
					elsewhere++
				})
				if elsewhere < 100 {
					t.Fatalf("only %d takes landed off Best's choices: the test exercises little", elsewhere)
				}
			})
		}
	}
}

// TestLooseLayoutIsRearranged: as Takes scatter similar nodes, searches
// visit more of the tree, and the index must notice and rearrange.
func TestLooseLayoutIsRearranged(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	c := newCluster(rng, 1000, realClasses, 0.5, false)
	x, err := NewIndex(Spread, c.capacity, c.free)
	if err != nil {
		t.Fatal(err)
	}
	x.hot.promote = math.MaxInt
	for range 20000 {
		d := realShapes[pickWeighted(rng, realMix)]
		if node, ok := x.Best(d); ok {
			x.Take(node, d)
		}
	}
	if x.layouts < 2 {
		t.Fatalf("%d layouts after 20000 searches: a loose layout was never rebuilt", x.layouts)
	}
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	good := exampleCluster()
	cases := []struct {
		name     string
		strategy Strategy
		edit     func(c *cluster)
		want     string
	}{
		{"unknown strategy", "firstfit", func(*cluster) {}, "unknown placement strategy"},
		{"fewer free than capacity", Affinity, func(c *cluster) { c.free = c.free[:3] }, "4 capacity vectors but 3 free"},
		{"short capacity", Affinity, func(c *cluster) { c.capacity[2] = ledger.Vector{1} }, "node 2 capacity"},
		{"long free", Affinity, func(c *cluster) { c.free[1] = ledger.Vector{1, 1, 1} }, "node 1 free vector has 3 entries"},
		{"negative capacity", Affinity, func(c *cluster) { c.capacity[3][0] = -1 }, "node 3 capacity"},
		{"NaN free", Affinity, func(c *cluster) { c.free[0][1] = math.NaN() }, "must be finite"},
		{"free above capacity", Spread, func(c *cluster) { c.free[0][0] = 9 }, "above its capacity"},
		{"negative free", BestFit, func(c *cluster) { c.free[0][0] = -1 }, "below zero"},
		{"tiny resource", Affinity, func(c *cluster) {
			for i := range c.capacity {
				c.capacity[i][1], c.free[i][1] = 1e-8, 0
			}
		}, "too small"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := good.clone()
			tc.edit(&bad)
			if _, err := NewIndex(tc.strategy, bad.capacity, bad.free); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewIndex error = %v, want one mentioning %q", err, tc.want)
			}
			x, err := NewIndex(Spread, good.capacity, good.free)
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Reset(tc.strategy, bad.capacity, bad.free); err == nil {
				t.Fatal("Reset accepted bad input")
			}
			if x.Len() != 4 || x.Strategy() != Spread {
				t.Fatalf("failed Reset changed the index: %d nodes, strategy %s", x.Len(), x.Strategy())
			}
			if node, ok := x.Best(ledger.Vector{1, 1}); !ok || node != 2 {
				t.Fatalf("after a failed Reset Best = %d, %v; want node 2 as before", node, ok)
			}
		})
	}
}

func TestSmallRoundingResidueIsAccepted(t *testing.T) {
	// Free vectors read back from Free after Takes, or summed by a caller,
	// may stray from [0, capacity] by rounding residue.
	capacity := []ledger.Vector{{8, 1e12}}
	free := []ledger.Vector{{-1e-9, 1e12 + 1e-3}}
	if _, err := NewIndex(BestFit, capacity, free); err != nil {
		t.Fatal(err)
	}
}

func TestBadDemandFitsNowhereAndTakeIgnoresBadInput(t *testing.T) {
	c := exampleCluster()
	x, err := NewIndex(Affinity, c.capacity, c.free)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []ledger.Vector{nil, {1}, {1, 1, 1}, {-1, 1}, {math.NaN(), 1}, {math.Inf(1), 0}} {
		if node, ok := x.Best(d); ok || node != -1 {
			t.Errorf("Best(%v) = %d, %v; want -1, false", d, node, ok)
		}
	}
	before := make([]ledger.Vector, x.Len())
	for i := range before {
		before[i] = x.Free(i).Clone()
	}
	for _, tc := range []struct {
		node int
		d    ledger.Vector
		want string
	}{
		{-1, ledger.Vector{1, 1}, "numbered from 0"},
		{4, ledger.Vector{1, 1}, "holds 4 nodes"},
		{0, ledger.Vector{1}, "demand"},
		{0, ledger.Vector{math.NaN(), 1}, "demand"},
		{0, ledger.Vector{-1, 0}, "demand"},
		{3, ledger.Vector{2, 1}, "does not fit"},
	} {
		x.Take(tc.node, tc.d)
		if err := x.TryTake(tc.node, tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("TryTake(%d, %v) error = %v, want one mentioning %q", tc.node, tc.d, err, tc.want)
		}
	}
	for i := range before {
		if !slices.Equal(x.Free(i), before[i]) {
			t.Fatalf("refused takes changed node %d: free %v, was %v", i, x.Free(i), before[i])
		}
	}
	if err := x.TryTake(3, ledger.Vector{1, 1}); err != nil {
		t.Fatalf("TryTake of a demand that fits exactly: %v", err)
	}
	if !x.Free(3).IsZero() {
		t.Fatalf("node 3 free = %v after taking all of it", x.Free(3))
	}
}

// TestFitSlackCoversLedgerTolerance guards the best-fit bound: it assumes a
// free quantity more than fitSlack/2 below the demand fails Fits. If ledger
// loosens its tolerance, fitSlack must grow with it.
func TestFitSlackCoversLedgerTolerance(t *testing.T) {
	for _, d := range []float64{0, 1, 1e6, 1e12} {
		free := ledger.Vector{d - fitSlack/2*1.0001 - d*fitSlackRelative}
		if free[0] < d && free.Fits(ledger.Vector{d}) {
			t.Fatalf("ledger.Vector.Fits lets free %v take demand %v: its tolerance outgrew fitSlack", free[0], d)
		}
	}
	if !(ledger.Vector{1}).Fits(ledger.Vector{1 + fitSlack/10}) {
		t.Fatal("ledger.Vector.Fits has no tolerance any more: fitSlack can shrink")
	}
}
