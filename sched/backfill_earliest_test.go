package sched

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// mergedEarliest is earliest as it was first written, kept as the
// reference: every node's events merged into one (time, node, order
// listed) sequence, taken one by one from a heap until the need-th node
// holds the job. It returns the time, whether there is one, the nodes
// reserve takes (the first need that hold the job by then, in index
// order) and each one's free vector at that time. It reads the engine's
// state and changes none of it.
func mergedEarliest(e *Engine, job *Job) (ledger.Time, bool, []int, []ledger.Vector) {
	r := &e.resv
	n, k := e.index.Len(), len(e.capacity)
	need := max(job.Nodes, 1)
	now := e.view.Now
	fitAt := make([]ledger.Time, n)
	free := make([]ledger.Vector, n)
	fits := 0
	for i := range n {
		fitAt[i] = -1
		if r.reservedNode(i) {
			continue
		}
		if e.holdsOn(job, i, e.index.Free(i)) {
			fitAt[i] = now
			fits++
		}
	}
	chosen := func(at ledger.Time) (ledger.Time, bool, []int, []ledger.Vector) {
		var nodes []int
		var frees []ledger.Vector
		for i := range n {
			if fitAt[i] >= 0 && len(nodes) < need {
				nodes = append(nodes, i)
				f := free[i]
				if f == nil {
					f = e.baseFree(i).Clone()
				}
				frees = append(frees, f)
			}
		}
		return at, true, nodes, frees
	}
	if fits >= need {
		return chosen(now)
	}
	type event struct {
		at        ledger.Time
		node, seq int
		free      ledger.Vector
	}
	var merged []event
	for i := range e.view.Nodes {
		for _, rel := range e.view.Nodes[i].Releases {
			merged = append(merged, event{at: max(rel.At, now), node: i, free: rel.Free})
		}
	}
	for _, ev := range r.events {
		merged = append(merged, event{at: ev.at, node: ev.node, free: ev.free})
	}
	if r.made {
		for s, node := range r.nodes {
			if int(r.slot[node]) != s {
				continue
			}
			if from, ok := r.freeFrom(node); ok {
				merged = append(merged, event{at: max(from, now), node: node, free: make(ledger.Vector, k)})
			}
		}
	}
	for i := range merged {
		merged[i].seq = i
	}
	// A stable sort by (time, node) takes them in the heap's order.
	slices.SortStableFunc(merged, func(x, y event) int {
		switch {
		case x.at != y.at:
			return int(min(max(x.at-y.at, -1), 1))
		default:
			return x.node - y.node
		}
	})
	for _, ev := range merged {
		if free[ev.node] == nil {
			free[ev.node] = e.baseFree(ev.node).Clone()
		}
		f := free[ev.node]
		f.Add(ev.free)
		if r.reservedNode(ev.node) {
			if from, ok := r.freeFrom(ev.node); !ok || ev.at < from {
				continue
			}
		}
		if fitAt[ev.node] < 0 && e.holdsOn(job, ev.node, f) {
			fitAt[ev.node] = ev.at
			if fits++; fits == need {
				return chosen(ev.at)
			}
		}
	}
	return 0, false, nil, nil
}

// earliest finds the time, the nodes and their free vectors then that
// merging every release into one time order finds, bit for bit: after
// every pass of random sequences (the engine's reservations made, the
// pass's own placements' releases listed, masks written or pending), for
// every queued job.
func TestEarliestMatchesTheMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	compared, found, later := 0, 0, 0
	for iter := range 500 {
		v := backfillSequenceView(r, iter)
		e := NewEngine()
		for pass := range 4 {
			ps, err := e.Schedule(v)
			if err != nil {
				t.Fatalf("iteration %d pass %d: %v", iter, pass, err)
			}
			for a := range v.Accounts {
				for j := range v.Accounts[a].Queue {
					job := &v.Accounts[a].Queue[j]
					if job.Pending <= 0 || !e.fleet.holds(job) {
						continue
					}
					wantAt, wantOK, wantNodes, wantFree := mergedEarliest(e, job)
					gotAt, gotOK := e.earliest(job)
					compared++
					if gotAt != wantAt || gotOK != wantOK {
						t.Fatalf("iteration %d pass %d, job %d: earliest %v (%v), the merge %v (%v)", iter, pass, job.ID, gotAt, gotOK, wantAt, wantOK)
					}
					if !gotOK {
						continue
					}
					found++
					if gotAt > v.Now {
						later++
					}
					if !slices.Equal(e.resv.ordered, wantNodes) {
						t.Fatalf("iteration %d pass %d, job %d: nodes %v, the merge %v", iter, pass, job.ID, e.resv.ordered, wantNodes)
					}
					for x, node := range wantNodes {
						if got := e.freeAt(node); !sameBits(got, wantFree[x]) {
							t.Fatalf("iteration %d pass %d, job %d: node %d free %v at %v, the merge %v", iter, pass, job.ID, node, got, gotAt, wantFree[x])
						}
					}
				}
			}
			advanceView(r, v, slices.Clone(ps))
		}
	}
	if found < 2000 || later < 1000 {
		t.Fatalf("%d comparisons, %d found a time, %d after now: earliest was barely exercised", compared, found, later)
	}
	t.Logf("%d comparisons, %d found a time, %d after now", compared, found, later)
}

// sameBits reports whether a and b are equal bit for bit.
func sameBits(a, b ledger.Vector) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// needthKey and nthTime return what sorting would put at each place.
func TestNeedthKeyIsTheSortedKey(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	e := NewEngine()
	for range 2000 {
		keys := make([]fitKey, 1+r.IntN(40))
		for i := range keys {
			keys[i] = fitKey{at: ledger.Time(r.IntN(5)), node: 2*i + r.IntN(2), event: r.IntN(3)}
		}
		sorted := slices.Clone(keys)
		slices.SortFunc(sorted, func(x, y fitKey) int {
			if x.before(y) {
				return -1
			}
			return 1
		})
		m := 1 + r.IntN(len(keys))
		e.resv.cands = keys // in node order, as earliest lists them
		e.resv.times = e.resv.times[:0]
		for _, c := range keys {
			e.resv.times = append(e.resv.times, int64(c.at))
		}
		if got := e.needthKey(m); got != sorted[m-1] {
			t.Fatalf("needthKey(%d) = %v, sorted %v", m, got, sorted)
		}
		times := make([]int64, len(keys))
		for i := range times {
			times[i] = int64(r.IntN(6))
		}
		want := slices.Sorted(slices.Values(times))
		if got := nthTime(times, m-1); got != want[m-1] {
			t.Fatalf("nthTime(%d) = %d, sorted %v", m-1, got, want)
		}
	}
}
