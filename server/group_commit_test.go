package server

import (
	"slices"
	"testing"
)

// take forms groups in arrival order within the count and size limits,
// drops abandoned proposals, sends an oversized one alone, and retires
// its flusher when nothing is left.
func TestGroupCommitTakeLimits(t *testing.T) {
	var g groupCommit
	var want [][]int // group sizes, by proposal number
	add := func(size int, abandoned bool) int {
		p := &proposal{data: make([]byte, size), done: make(chan struct{})}
		if abandoned {
			p.state.Store(proposalAbandoned)
		}
		g.queue = append(g.queue, p)
		return len(g.queue) - 1
	}
	// Group 1: maxGroupCommands small ones, with an abandoned one among
	// them that does not count.
	var first []int
	for i := range maxGroupCommands + 1 {
		k := add(100, i == 7)
		if i != 7 {
			first = append(first, k)
		}
	}
	want = append(want, first)
	// Group 2: the rest up to the byte limit; group 3: an oversized one
	// alone; group 4: a small one.
	half := maxGroupBytes / 2
	want = append(want, []int{add(half, false), add(half-200, false)})
	want = append(want, []int{add(maxGroupBytes+1, false)})
	want = append(want, []int{add(10, false)})
	all := slices.Clone(g.queue)
	g.flushers = 1

	for gi, w := range want {
		group := g.take()
		if len(group) != len(w) {
			t.Fatalf("group %d has %d proposals, want %d", gi, len(group), len(w))
		}
		size := 0
		for i, p := range group {
			if p != all[w[i]] {
				t.Fatalf("group %d position %d is not proposal %d", gi, i, w[i])
			}
			if p.state.Load() != proposalTaken {
				t.Fatalf("proposal %d in a group is not marked taken", w[i])
			}
			size += len(p.data)
		}
		if len(group) > 1 && size > maxGroupBytes {
			t.Fatalf("group %d holds %d bytes", gi, size)
		}
	}
	if rest := g.take(); rest != nil || g.flushers != 0 || len(g.queue) != 0 {
		t.Fatalf("after the last group: %d more, %d flushers, %d queued", len(rest), g.flushers, len(g.queue))
	}
}
