package sched

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// The reservation's time. A node comes to hold a job at the first of its
// own releases (in time order) after which its free vector holds the
// job's per-node demand: that depends on the node's releases alone. So
// earliest walks each node's few releases for the time it holds the job,
// and then picks the need-th soonest node, ties to the lowest index,
// rather than merging every release of the cluster into one time order:
// the same time and nodes the merge finds (TestEarliestMatchesTheMerge
// compares it with the merge), at a fraction of the cost, with no list of
// all releases built and no heap.

// fitKey is when node came to hold the job, and at which of its events
// (nodeEvents' order).
type fitKey struct {
	at    ledger.Time
	node  int
	event int
}

// before orders fit keys by time, then node.
func (x fitKey) before(y fitKey) bool {
	if x.at != y.at {
		return x.at < y.at
	}
	return x.node < y.node
}

// earliest is the earliest time, not before the view's, at which enough
// nodes hold a task of job — one node, or job.Nodes distinct ones — from
// what the index has free now and what running tasks give back at their
// latest ends (the view's releases and the pass's own placements), and
// whether there is one. It leaves in r.ordered the nodes that hold it
// soonest (lowest index on ties), in index order, and each one's free
// vector then for freeAt.
//
// Taking every node's events in one (time, node, order listed) sequence
// until the need-th node holds the job gives the same: a node holds it
// from its own events alone; the need-th node to hold it is the need-th
// by (time, node); and what that sequence added to a chosen node's free
// vector by then is its events up to that time, or at it when the node's
// index is lower (up to its fitting event for the need-th node itself),
// which freeAt is given.
func (e *Engine) earliest(job *Job) (ledger.Time, bool) {
	r := &e.resv
	n, k := e.index.Len(), len(e.capacity)
	need := max(job.Nodes, 1)
	now := e.view.Now
	r.fitAt = resize(r.fitAt, n)
	r.copied = resize(r.copied, n)
	clear(r.copied)
	r.ordered = r.ordered[:0]
	// holdsOn, spelled out in the loop below.
	d, exclusive := job.nodeDemand(), job.Exclusive
	e.groupEvents()
	r.free = resize(r.free, n*k)
	r.walked = resize(r.walked, n)
	r.cands, r.times = r.cands[:0], r.times[:0]
	fits := 0
	for i := range n {
		r.fitAt[i], r.walked[i] = -1, 0
		// A node an earlier reservation holds holds the job only from
		// when the jobs reserved on it end; the others may hold it now.
		from, gated := ledger.Time(0), r.made && r.slot[i] >= 0
		base := e.index.Free(i)
		if gated {
			first := int(r.slot[i])
			base = r.real[first*k : first*k+k]
			var ok bool
			if from, ok = r.freeFrom(i); !ok {
				continue // they may run on and on
			}
		} else if base.Fits(d) && (!exclusive || sameVector(e.fleet.caps[i], d)) {
			r.fitAt[i] = now
			fits++
			continue
		}
		// nodeEvents, its common case spelled out: the view's releases,
		// in time order, and nothing else for the node.
		evs := e.view.Nodes[i].Releases
		if gated || len(r.events) > 0 && r.evStart[i] < r.evStart[i+1] || !releasesInOrder(evs) {
			evs = e.mergeEvents(i)
		}
		if len(evs) == 0 {
			continue
		}
		// The walk leaves the node's vector in r.free, for freeAt if the
		// node is chosen.
		f := ledger.Vector(r.free[i*k : i*k+k])
		copy(f, base)
		for j, ev := range evs {
			f.Add(ev.Free)
			at := max(ev.At, now)
			if (!gated || at >= from) && f.Fits(d) && (!exclusive || sameVector(e.fleet.caps[i], d)) {
				r.cands = append(r.cands, fitKey{at: at, node: i, event: j})
				r.times = append(r.times, int64(at))
				r.walked[i] = int32(j + 1)
				break
			}
		}
	}
	if fits >= need {
		for i := 0; len(r.ordered) < need; i++ {
			if r.fitAt[i] >= 0 {
				r.ordered = append(r.ordered, i)
			}
		}
		return now, true
	}
	m := need - fits
	if len(r.cands) < m {
		return 0, false
	}
	stop := e.needthKey(m)
	for _, c := range r.cands {
		if !stop.before(c) {
			r.fitAt[c.node] = c.at
		}
	}
	for i := range n {
		if r.fitAt[i] < 0 {
			continue
		}
		r.ordered = append(r.ordered, i)
		evs := e.nodeEvents(i)
		upTo := 0
		switch {
		case i == stop.node:
			upTo = stop.event + 1
		case i < stop.node:
			for upTo < len(evs) && max(evs[upTo].At, now) <= stop.at {
				upTo++
			}
		default:
			for upTo < len(evs) && max(evs[upTo].At, now) < stop.at {
				upTo++
			}
		}
		if upTo == 0 {
			continue
		}
		// A node that came to hold the job has its events up to the one
		// that made it in r.free already (upTo is at least that many).
		f := ledger.Vector(r.free[i*k : i*k+k])
		from := int(r.walked[i])
		if from == 0 {
			copy(f, e.baseFree(i))
		}
		for _, ev := range evs[from:upTo] {
			f.Add(ev.Free)
		}
		r.copied[i] = true
	}
	return stop.at, true
}

// groupEvents lists the pass's own events by node for nodeEvents: node
// i's are r.events[r.evOrder[r.evStart[i]:r.evStart[i+1]]], in order.
func (e *Engine) groupEvents() {
	r := &e.resv
	if len(r.events) == 0 {
		return
	}
	n := e.index.Len()
	r.evStart = resize(r.evStart, n+1)
	clear(r.evStart)
	for _, ev := range r.events {
		r.evStart[ev.node+1]++
	}
	for i := range n {
		r.evStart[i+1] += r.evStart[i]
	}
	r.evOrder = resize(r.evOrder, len(r.events))
	for x, ev := range r.events {
		r.evOrder[r.evStart[ev.node]] = int32(x)
		r.evStart[ev.node]++
	}
	// Each start has moved to the next node's: shift them back.
	copy(r.evStart[1:], r.evStart[:n])
	r.evStart[0] = 0
}

// nodeEvents is what node gets back and when, in time order (a release
// due before now counts at now), equal times in the order listed: the
// view's releases, the pass's own placements' (groupEvents), and for a
// node an earlier reservation holds, nothing at the time its reserved
// jobs end, so that the node is looked at then. A node with only the
// view's releases, listed in time order, gets them as they are; the
// slice is valid until the next call.
func (e *Engine) nodeEvents(node int) []Release {
	r := &e.resv
	rels := e.view.Nodes[node].Releases
	own := len(r.events) > 0 && r.evStart[node] < r.evStart[node+1]
	if !own && !r.reservedNode(node) && releasesInOrder(rels) {
		return rels
	}
	return e.mergeEvents(node)
}

// mergeEvents is nodeEvents for a node with more than the view's
// releases, or with releases listed out of time order.
func (e *Engine) mergeEvents(node int) []Release {
	r := &e.resv
	now := e.view.Now
	rels := e.view.Nodes[node].Releases
	evs := append(r.evs[:0], rels...)
	if len(r.events) > 0 && r.evStart[node] < r.evStart[node+1] {
		for _, x := range r.evOrder[r.evStart[node]:r.evStart[node+1]] {
			evs = append(evs, Release{At: r.events[x].at, Free: r.events[x].free})
		}
	}
	if r.reservedNode(node) {
		if from, ok := r.freeFrom(node); ok {
			r.zero = resize(r.zero, len(e.capacity))
			clear(r.zero)
			evs = append(evs, Release{At: max(from, now), Free: r.zero})
		}
	}
	// A stable insertion sort by time: a node has few events.
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && max(evs[j].At, now) < max(evs[j-1].At, now); j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	r.evs = evs
	return evs
}

// releasesInOrder reports whether rels are listed in time order.
func releasesInOrder(rels []Release) bool {
	for i := 1; i < len(rels); i++ {
		if rels[i].At < rels[i-1].At {
			return false
		}
	}
	return true
}

// needthKey is the m-th (from 1) of r.cands in fitKey order: the m-th
// smallest time (nthTime over r.times, the candidates' times), then among
// the candidates at that time, which r.cands lists in node order, the one
// that makes m.
func (e *Engine) needthKey(m int) fitKey {
	r := &e.resv
	at := ledger.Time(nthTime(r.times, m-1))
	for _, c := range r.cands {
		if c.at < at {
			m--
		}
	}
	var stop fitKey
	for _, c := range r.cands {
		if c.at == at {
			if stop, m = c, m-1; m == 0 {
				break
			}
		}
	}
	return stop
}

// nthTime returns the m-th (from 0) smallest of times, reordering them: a
// quickselect, linear on average; the first and the last in one pass
// (common: a wide job needs every node that comes to hold it).
func nthTime(times []int64, m int) int64 {
	switch m {
	case 0:
		return slices.Min(times)
	case len(times) - 1:
		return slices.Max(times)
	}
	lo, hi := 0, len(times)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if times[mid] < times[lo] {
			times[mid], times[lo] = times[lo], times[mid]
		}
		if times[hi] < times[lo] {
			times[hi], times[lo] = times[lo], times[hi]
		}
		if times[hi] < times[mid] {
			times[hi], times[mid] = times[mid], times[hi]
		}
		p := times[mid]
		i, j := lo, hi
		for i <= j {
			for times[i] < p {
				i++
			}
			for p < times[j] {
				j--
			}
			if i <= j {
				times[i], times[j] = times[j], times[i]
				i++
				j--
			}
		}
		switch {
		case m <= j:
			hi = j
		case m >= i:
			lo = i
		default:
			return times[m]
		}
	}
	return times[m]
}

// freeAt is node's free vector at the time earliest found: its copy in
// r.free if a release reached it by then, else what it has free now.
func (e *Engine) freeAt(node int) ledger.Vector {
	r := &e.resv
	if node < len(r.copied) && r.copied[node] {
		k := len(e.capacity)
		return ledger.Vector(r.free[node*k : node*k+k])
	}
	return e.baseFree(node)
}

// baseFree is what node has free now: its true free vector if reserved
// (the index holds its mask, or will), else the index's.
func (e *Engine) baseFree(node int) ledger.Vector {
	r := &e.resv
	if r.reservedNode(node) {
		k := len(e.capacity)
		first := int(r.slot[node])
		return ledger.Vector(r.real[first*k : first*k+k])
	}
	return e.index.Free(node)
}
