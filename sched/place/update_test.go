package place

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// TestUpdateMatchesNewIndex keeps one index across many rounds of Update
// (UpdateFree every other round: the capacities do not change), each with
// some nodes' free vectors moved (up or down) after a run of Best+Take,
// and checks every answer against a fresh index over the same vectors, for
// every strategy and search mode.
func TestUpdateMatchesNewIndex(t *testing.T) {
	for _, mode := range searchModes {
		for _, s := range Strategies() {
			for _, n := range []int{1, 7, 100, 300} {
				t.Run(fmt.Sprintf("%s/%s/%d", mode.name, s, n), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(n), 21))
					c := newCluster(rng, n, dyadicClasses, 0.6, true)
					kept, err := NewIndex(s, c.capacity, c.free)
					if err != nil {
						t.Fatal(err)
					}
					kept.hot.promote = mode.promote
					for round := range 60 {
						// Move some nodes: back to idle, or a few tasks used.
						for range 1 + rng.IntN(max(n/4, 1)) {
							v := rng.IntN(n)
							c.free[v] = c.capacity[v].Clone()
							for range rng.IntN(3) {
								d := dyadicShapes[rng.IntN(len(dyadicShapes))]
								if c.free[v].Fits(d) {
									c.free[v].Sub(d)
								}
							}
						}
						update := kept.Update
						if round%2 == 1 { // the capacities are those of the last round
							update = kept.UpdateFree
						}
						if err := update(s, c.capacity, c.free); err != nil {
							t.Fatal(err)
						}
						fresh, err := NewIndex(s, c.capacity, c.free)
						if err != nil {
							t.Fatal(err)
						}
						for step := range 3 * n {
							d := dyadicShapes[rng.IntN(len(dyadicShapes))]
							a, aok := kept.Best(d)
							b, bok := fresh.Best(d)
							if a != b || aok != bok {
								t.Fatalf("round %d step %d: updated index says %d,%v; new index %d,%v", round, step, a, aok, b, bok)
							}
							if aok {
								kept.Take(a, d)
								fresh.Take(b, d)
								if step%5 == 0 { // leave some Takes behind for the next Update to undo
									c.free[a] = ledger.Vector(fresh.Free(a)).Clone()
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestUpdateRefusesBadInputAndChangesNothing checks that Update refuses
// what Reset refuses, leaving the index as it was.
func TestUpdateRefusesBadInputAndChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	c := newCluster(rng, 20, dyadicClasses, 0.5, true)
	x, err := NewIndex(Affinity, c.capacity, c.free)
	if err != nil {
		t.Fatal(err)
	}
	bad := c.clone()
	bad.free[4][0] = bad.capacity[4][0] + 1
	if err := x.Update(Affinity, bad.capacity, bad.free); err == nil {
		t.Fatal("Update accepted a free quantity above the capacity")
	}
	for v := range c.free {
		if !sameBits(x.Free(v), c.free[v]) {
			t.Fatalf("node %d: free %v after a refused Update, want %v", v, x.Free(v), c.free[v])
		}
	}
}
