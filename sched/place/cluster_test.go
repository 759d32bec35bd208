package place

import (
	"math/rand/v2"

	"github.com/longfair/longfair/ledger"
)

// Test clusters. Resources are, in order: cpu, mem, mic, gpu.

// nodeClass is one kind of node and how common it is.
type nodeClass struct {
	capacity ledger.Vector
	share    float64
}

// cluster is capacity and free vectors for nodes, as NewIndex takes them.
type cluster struct {
	capacity, free []ledger.Vector
}

func (c cluster) clone() cluster {
	out := cluster{capacity: make([]ledger.Vector, len(c.capacity)), free: make([]ledger.Vector, len(c.free))}
	for i := range c.capacity {
		out.capacity[i] = c.capacity[i].Clone()
		out.free[i] = c.free[i].Clone()
	}
	return out
}

// dyadicClasses have capacities whose per-resource maxima are powers of two
// and integer quantities, so every score is computed exactly and the index
// must agree with the brute force even on ties.
var dyadicClasses = []nodeClass{
	{ledger.Vector{16, 64, 0, 0}, 0.3},
	{ledger.Vector{32, 128, 0, 0}, 0.3},
	{ledger.Vector{64, 512, 0, 0}, 0.1},
	{ledger.Vector{16, 96, 4, 0}, 0.15},
	{ledger.Vector{32, 256, 0, 8}, 0.15},
}

var dyadicShapes = []ledger.Vector{
	{1, 2, 0, 0}, {1, 4, 0, 0}, {4, 16, 0, 0}, {16, 64, 0, 0}, {2, 128, 0, 0},
	{1, 4, 1, 0}, {4, 32, 0, 1}, {0, 0, 0, 0}, {65, 1, 0, 0}, {1, 1, 5, 0},
}

const gib = 1 << 30

// realClasses look like an HPC centre's nodes: memory in bytes, Xeon Phi
// (mic) hosts and GPU nodes. Maxima are not powers of two, so scores round.
var realClasses = []nodeClass{
	{ledger.Vector{48, 192 * gib, 0, 0}, 0.6},
	{ledger.Vector{64, 1024 * gib, 0, 0}, 0.1},
	{ledger.Vector{68, 96 * gib, 2, 0}, 0.15},
	{ledger.Vector{36, 384 * gib, 0, 4}, 0.15},
}

var realShapes = []ledger.Vector{
	{1, 2 * gib, 0, 0}, {1, 3.7 * gib, 0, 0}, {4, 16 * gib, 0, 0}, {16, 64 * gib, 0, 0},
	{1, 4 * gib, 1, 0}, {4, 32 * gib, 0, 1}, {2, 200 * gib, 0, 0}, {0.5, 1.5 * gib, 0, 0},
}

// realMix weights realShapes the way a benchmark stream draws them.
var realMix = []float64{0.3, 0.1, 0.25, 0.1, 0.1, 0.1, 0.03, 0.02}

// newCluster draws n nodes from classes, each partly used: up to maxUsed of
// every resource is taken, in whole units when whole is set.
func newCluster(rng *rand.Rand, n int, classes []nodeClass, maxUsed float64, whole bool) cluster {
	c := cluster{capacity: make([]ledger.Vector, n), free: make([]ledger.Vector, n)}
	for i := range n {
		cl := pickClass(rng, classes)
		c.capacity[i] = cl.capacity.Clone()
		free := cl.capacity.Clone()
		for j := range free {
			used := free[j] * maxUsed * rng.Float64()
			if whole {
				used = float64(int(used))
			}
			free[j] -= used
		}
		c.free[i] = free
	}
	return c
}

func pickClass(rng *rand.Rand, classes []nodeClass) nodeClass {
	u := rng.Float64()
	for _, cl := range classes {
		if u < cl.share {
			return cl
		}
		u -= cl.share
	}
	return classes[len(classes)-1]
}

// pickWeighted draws an index with the given weights.
func pickWeighted(rng *rand.Rand, weights []float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	u := rng.Float64() * total
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return len(weights) - 1
}

// bruteForce is the reference: it scans every node and scores it with the
// formulas exactly as the package documentation states them.
type bruteForce struct {
	strategy Strategy
	scale    []float64 // M_j
	free     []ledger.Vector
}

func newBruteForce(s Strategy, c cluster) *bruteForce {
	bf := &bruteForce{strategy: s, free: c.clone().free}
	if len(c.capacity) > 0 {
		bf.scale = make([]float64, len(c.capacity[0]))
	}
	for _, cp := range c.capacity {
		for j, v := range cp {
			if v > bf.scale[j] {
				bf.scale[j] = v
			}
		}
	}
	return bf
}

func (bf *bruteForce) score(node int, d ledger.Vector) float64 {
	s := 0.0
	free := bf.free[node]
	for j, m := range bf.scale {
		if m == 0 {
			continue
		}
		switch bf.strategy {
		case Affinity:
			s += (d[j] / m) * (free[j] / m)
		case BestFit:
			s += (free[j] - d[j]) / m
		case Spread:
			s += free[j] / m
		}
	}
	return s
}

// better reports whether score a beats score b under the strategy.
func (bf *bruteForce) better(a, b float64) bool {
	if bf.strategy == BestFit {
		return a < b
	}
	return a > b
}

func (bf *bruteForce) best(d ledger.Vector) (node int, score float64, ok bool) {
	node = -1
	for i, free := range bf.free {
		if !free.Fits(d) {
			continue
		}
		s := bf.score(i, d)
		if node < 0 || bf.better(s, score) {
			node, score = i, s
		}
	}
	return node, score, node >= 0
}
