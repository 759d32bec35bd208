package place_test

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/place"
)

// Three nodes (resources cpu cores, mem GiB) and a memory-heavy task of
// 2 cores and 16 GiB. Every resource is normalized by the largest capacity
// (64 cores, 256 GiB).
//
// affinity Σ (d/M)(free/M): node 0 0.02637, node 1 0.01953, node 2 0.00635
// bestfit  Σ (free−d)/M:    node 0 0.35938, node 1 0.45313, node 2 0.03125
// spread   Σ free/M:        node 0 0.45313, node 1 0.54688, node 2 0.12500
func ExampleIndex() {
	capacity := []ledger.Vector{{32, 128}, {32, 128}, {64, 256}}
	free := []ledger.Vector{{4, 100}, {30, 20}, {3, 20}}
	task := ledger.Vector{2, 16}
	for _, s := range place.Strategies() {
		x, err := place.NewIndex(s, capacity, free)
		if err != nil {
			fmt.Println(err)
			return
		}
		node, ok := x.Best(task)
		fmt.Println(s, node, ok)
	}
	// Output:
	// affinity 0 true
	// bestfit 2 true
	// spread 1 true
}
