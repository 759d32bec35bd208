package place

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// TestRestoreUndoesTakes is the engine's gang rollback: Takes on several
// nodes, then Restore of the values saved before them, must leave an index
// that answers every Best exactly as a fresh index over the same free
// vectors does — including the hot trees a demand earned meanwhile.
func TestRestoreUndoesTakes(t *testing.T) {
	for _, s := range []Strategy{Affinity, BestFit, Spread} {
		rng := rand.New(rand.NewPCG(7, uint64(len(s))))
		c := newCluster(rng, 300, dyadicClasses, 0.5, true)
		var x Index
		if err := x.Reset(s, c.capacity, c.free); err != nil {
			t.Fatal(err)
		}
		for round := range 200 {
			d := dyadicShapes[rng.IntN(len(dyadicShapes))]
			var nodes []int
			var saved []ledger.Vector
			for range 1 + rng.IntN(8) {
				n, ok := x.Best(d)
				if !ok {
					break
				}
				saved = append(saved, x.Free(n).Clone())
				x.Take(n, d)
				nodes = append(nodes, n)
			}
			if round%3 == 0 { // keep some: the index moves on
				for _, n := range nodes {
					c.free[n].Sub(d)
				}
			} else {
				for i := len(nodes) - 1; i >= 0; i-- {
					x.Restore(nodes[i], saved[i])
				}
			}
			var fresh Index
			if err := fresh.Reset(s, c.capacity, c.free); err != nil {
				t.Fatal(err)
			}
			for _, q := range dyadicShapes {
				gn, gok := x.Best(q)
				wn, wok := fresh.Best(q)
				if gn != wn || gok != wok {
					t.Fatalf("%s round %d: Best(%v) = %d,%v after restore, want %d,%v as a fresh index answers", s, round, q, gn, gok, wn, wok)
				}
			}
			for n := range c.free {
				if !slices.Equal(x.Free(n), c.free[n]) {
					t.Fatalf("%s round %d: node %d free %v, want %v", s, round, n, x.Free(n), c.free[n])
				}
			}
		}
	}
}

// TestRestoreOfAFullNodeIsSeen: the node taken to nothing and restored to
// idle is found again for a demand only an idle node holds, though the
// index's bounds lowered when it was taken.
func TestRestoreOfAFullNodeIsSeen(t *testing.T) {
	for _, s := range []Strategy{Affinity, BestFit, Spread} {
		capacity := []ledger.Vector{{4, 8}, {4, 8}, {2, 8}}
		free := []ledger.Vector{{4, 8}, {1, 1}, {2, 8}}
		var x Index
		if err := x.Reset(s, capacity, free); err != nil {
			t.Fatal(err)
		}
		full := ledger.Vector{4, 8}
		n, ok := x.Best(full)
		if !ok || n != 0 {
			t.Fatalf("%s: Best(%v) = %d,%v, want node 0", s, full, n, ok)
		}
		saved := x.Free(0).Clone()
		x.Take(0, full)
		if _, ok := x.Best(full); ok {
			t.Fatalf("%s: a full-node demand fits after the only idle node was taken", s)
		}
		x.Restore(0, saved)
		if n, ok := x.Best(full); !ok || n != 0 {
			t.Fatalf("%s: after Restore, Best(%v) = %d,%v, want node 0 again", s, full, n, ok)
		}
	}
}
