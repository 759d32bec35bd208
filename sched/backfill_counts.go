package sched

import "github.com/longfair/longfair/ledger"

// Counts of the nodes that hold a demand. A gang is placed exactly when
// enough nodes hold its per-node demand (claimFree), so a pass counts
// them before it searches, and under backfill counts them again with
// the reserved nodes a short task may use (mayHoldBefore): a scan of
// every node for each account whose head is tried. After a reservation
// most of those tries fail and change nothing, and the heads of a log's
// jobs share a few per-node demands, so the same count was taken again
// and again. It is remembered until a placement, a reservation or an
// unmasking changes what is counted (reservation.version moves on).

// heldCount is how many nodes hold the demand at countD[at:at+k] with
// the reservations in before unmasked (bit j: the j-th reservation), or,
// unless complete, at least how many: a count stops once it has found as
// many as it was asked for.
type heldCount struct {
	at       int
	before   uint64
	nodes    int
	complete bool
}

// holding reports whether at least need nodes hold d as a search would
// see them now or, with unmask, as claimBeforeReservation unmasks them for
// a task ending at end: each reserved node it ends before a reservation's
// start on shows what allowed leaves the task.
func (e *Engine) holding(d ledger.Vector, end ledger.Time, unmask bool, need int) bool {
	r := &e.resv
	before, keyed := uint64(0), !r.straight
	if unmask {
		before, keyed = r.endsBeforeSet(end)
		keyed = keyed && !r.straight
	}
	memo := -1
	if keyed {
		if r.countsAt != r.version {
			r.counts, r.countD, r.countsAt = r.counts[:0], r.countD[:0], r.version
		}
		for x, c := range r.counts {
			if c.before == before && sameVector(r.countD[c.at:c.at+len(d)], d) {
				if c.complete || c.nodes >= need {
					return c.nodes >= need
				}
				memo = x // counted for fewer: count again
				break
			}
		}
	}
	// A node shows the index's vector, or a reserved node its pending
	// mask (the index shows the mask once written, or what
	// claimBeforeReservation unmasked for its claim) or, with unmask,
	// what allowed leaves the task.
	nodes, k, n := 0, len(e.capacity), e.index.Len()
	i := 0
	if !r.made {
		// No reservation: the index's vectors alone, in the tightest
		// loop (a pass without backfill counts here for every gang).
		nodes, i = e.countFree(d, need)
	}
	slot, pending := r.slot, r.pending
	for ; i < n && nodes < need; i++ {
		free := e.index.Free(i)
		if slot[i] >= 0 {
			switch first := int(slot[i]); {
			case unmask && r.endsBeforeSome(i, end):
				free = e.allowed(i, end)
			case pending:
				free = r.mask[first*k : first*k+k]
			}
		}
		if free.Fits(d) {
			nodes++
		}
	}
	c := heldCount{before: before, nodes: nodes, complete: i == n}
	switch {
	case memo >= 0:
		c.at = r.counts[memo].at
		r.counts[memo] = c
	case keyed:
		c.at = len(r.countD)
		r.counts = append(r.counts, c)
		r.countD = append(r.countD, d...)
	}
	return nodes >= need
}

// countFree counts the nodes whose vector in the index holds d, up to
// need, and returns the count and how many nodes it looked at.
func (e *Engine) countFree(d ledger.Vector, need int) (int, int) {
	nodes, n := 0, e.index.Len()
	for i := range n {
		if e.index.Free(i).Fits(d) {
			if nodes++; nodes >= need {
				return nodes, i + 1
			}
		}
	}
	return nodes, n
}

// carryCounts brings the counts taken before the pass's first
// reservation up to date with it, which changed only what its nodes show:
// their masks rather than their true free vectors (r.real, what the index
// showed). A count that stopped short is dropped.
func (e *Engine) carryCounts() {
	r := &e.resv
	k := len(e.capacity)
	kept := r.counts[:0]
	for _, c := range r.counts {
		if !c.complete || c.before != 0 {
			continue
		}
		d := ledger.Vector(r.countD[c.at : c.at+k])
		for s, node := range r.nodes {
			if int(r.slot[node]) != s {
				continue
			}
			if ledger.Vector(r.real[s*k : s*k+k]).Fits(d) {
				c.nodes--
			}
			if ledger.Vector(r.mask[s*k : s*k+k]).Fits(d) {
				c.nodes++
			}
		}
		kept = append(kept, c)
	}
	r.counts, r.countsAt = kept, r.version
}

// endsBeforeAny reports whether a task ending at end ends before some
// reservation's start: whether claimBeforeReservation would unmask a
// node for it.
func (r *reservation) endsBeforeAny(end ledger.Time) bool {
	for i := range r.jobs {
		if end <= r.jobs[i].at {
			return true
		}
	}
	return false
}

// endsBeforeSet is the set of reservations a task ending at end ends
// before the start of, bit j for the j-th, and false when there are too
// many for the bits: which reserved nodes are unmasked for the task, and
// to what, depends on that set alone.
func (r *reservation) endsBeforeSet(end ledger.Time) (uint64, bool) {
	if len(r.jobs) > 64 {
		return 0, false
	}
	var set uint64
	for i := range r.jobs {
		if end <= r.jobs[i].at {
			set |= 1 << i
		}
	}
	return set, true
}
