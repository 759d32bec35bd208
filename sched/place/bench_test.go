package place

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/longfair/longfair/ledger"
)

const (
	benchNodes = 10_000
	// benchStream is the number of Best+Take attempts one benchmark op
	// makes from the starting cluster: enough to fill it, so the op covers
	// the easy start of a pass and the hard end where few nodes fit.
	benchStream = 100_000
)

// benchSetup returns a heterogeneous 10,000-node cluster (cpu, mem, mic,
// gpu), a quarter used on average, and a stream of task demands.
func benchSetup() (cluster, []ledger.Vector) {
	rng := rand.New(rand.NewPCG(2026, 1))
	c := newCluster(rng, benchNodes, realClasses, 0.5, false)
	stream := make([]ledger.Vector, benchStream)
	for i := range stream {
		stream[i] = realShapes[pickWeighted(rng, realMix)]
	}
	return c, stream
}

// BenchmarkBestTake places a stream of tasks one at a time on 10,000 nodes
// and reports the cost of one placement attempt (Best, then Take when it
// fits) and its allocations. One op is the whole stream, so even -benchtime
// 1x measures 100,000 placements.
func BenchmarkBestTake(b *testing.B) {
	c, stream := benchSetup()
	benchBestTake(b, c, stream, 0)
}

// BenchmarkBestTakeSearchOnly is BenchmarkBestTake with every demand served
// by the branch-and-bound search, as when every task has a shape of its own.
func BenchmarkBestTakeSearchOnly(b *testing.B) {
	c, stream := benchSetup()
	benchBestTake(b, c, stream, math.MaxInt)
}

// benchBestTake places stream on c under every strategy, from the same
// starting state each op; promote, when positive, overrides the search
// visits that earn a demand its tree.
func benchBestTake(b *testing.B, c cluster, stream []ledger.Vector, promote int) {
	for _, s := range Strategies() {
		b.Run(string(s), func(b *testing.B) {
			x, err := NewIndex(s, c.capacity, c.free)
			if err != nil {
				b.Fatal(err)
			}
			x.hot.promote = promote
			var before, after runtime.MemStats
			placed := 0
			b.ResetTimer()
			runtime.ReadMemStats(&before)
			for range b.N {
				b.StopTimer()
				if err := x.Reset(s, c.capacity, c.free); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for _, d := range stream {
					if node, ok := x.Best(d); ok {
						x.Take(node, d)
						placed++
					}
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			attempts := float64(b.N * len(stream))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/attempts, "ns/placement")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/attempts, "allocs/placement")
			b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
		})
	}
}

// BenchmarkBestTakeInterleaved is the engine's worst case: 1,000 accounts
// served in turn, each placing the next task of its own jobs, so consecutive
// asks are for different demands (128 distinct ones) and few demands earn a
// tree. Nodes are two classes, all idle at first, quantities whole numbers,
// so scores tie often. One op is 100,000 placements.
func BenchmarkBestTakeInterleaved(b *testing.B) {
	rng := rand.New(rand.NewPCG(42, 42))
	var c cluster
	for i := range benchNodes {
		cp := ledger.Vector{32, 128, 0}
		if i%10 == 0 {
			cp = ledger.Vector{64, 96, 4}
		}
		c.capacity = append(c.capacity, cp)
		c.free = append(c.free, cp.Clone())
	}
	var stream []ledger.Vector // account-major queues, served in turn
	queues := make([][]ledger.Vector, 1000)
	for i := range queues {
		for j := range 10 {
			d := ledger.Vector{float64(1 + rng.IntN(4)), float64(1 + rng.IntN(16)), 0}
			if (i+j)%50 == 0 {
				d[2] = 1
			}
			for range 10 {
				queues[i] = append(queues[i], d)
			}
		}
	}
	for step := range 100 {
		for _, q := range queues {
			stream = append(stream, q[step])
		}
	}
	benchBestTake(b, c, stream, 0)
}

// BenchmarkReset reports what rebuilding the index for 10,000 nodes costs
// (the engine does it once per pass).
func BenchmarkReset(b *testing.B) {
	c, _ := benchSetup()
	x, err := NewIndex(Affinity, c.capacity, c.free)
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	b.ResetTimer()
	runtime.ReadMemStats(&before)
	for range b.N {
		if err := x.Reset(Affinity, c.capacity, c.free); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/reset")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchNodes, "ns/node")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/reset")
}
