package place

import (
	"math/rand/v2"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// Idle finds what a scan of every node finds: the lowest-indexed node
// idle and of exactly the class asked for, never a larger node whose
// leftover happens to equal that class, through random takes and restores.
func TestIdleMatchesScan(t *testing.T) {
	small, large := ledger.Vector{4, 8}, ledger.Vector{8, 16}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 5 + rng.IntN(60)
		caps := make([]ledger.Vector, n)
		free := make([]ledger.Vector, n)
		for i := range n {
			caps[i] = small
			if rng.IntN(2) == 0 {
				caps[i] = large
			}
			free[i] = caps[i].Clone()
		}
		x, err := NewIndex(BestFit, caps, free)
		if err != nil {
			t.Fatal(err)
		}
		scan := func(d ledger.Vector) (int, bool) {
			for i := range n {
				if sameVector(caps[i], d) && sameVector(x.Free(i), d) {
					return i, true
				}
			}
			return 0, false
		}
		for step := range 200 {
			for _, d := range []ledger.Vector{small, large, {1, 1}} {
				got, gotOK := x.Idle(d, caps)
				want, wantOK := scan(d)
				if got != want || gotOK != wantOK {
					t.Fatalf("seed %d step %d: Idle(%v) = %d, %v; a scan finds %d, %v", seed, step, d, got, gotOK, want, wantOK)
				}
			}
			node := rng.IntN(n)
			switch rng.IntN(3) {
			case 0: // a large node's leftover equal to a small node's capacity
				if sameVector(caps[node], large) && sameVector(x.Free(node), large) {
					x.Take(node, small)
				}
			case 1:
				if f := x.Free(node); f.Fits(ledger.Vector{1, 2}) {
					x.Take(node, ledger.Vector{1, 2})
				}
			default:
				x.Restore(node, caps[node])
			}
		}
	}
}
