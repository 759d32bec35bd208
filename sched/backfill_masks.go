package sched

import "github.com/longfair/longfair/ledger"

// Masks, lazily. A reservation masks its nodes in the placement index
// (each reserved node shows the least of its true free vector and every
// reservation's spare on it), so that every search keeps the reservation
// whole. But most passes that reserve search no more: the jobs ranked
// after the reserved one fit no node around it, which a count over the
// masks shows without the index. Writing the masks into the index
// (Restore, a move between groups of twins) and the next pass's Update
// writing the true vectors back cost more than the rest of such a pass.
//
// So the masks are computed when a reservation is made or its books
// change, and written into the index only before its first search
// (applyMasks, from bestFor and claimFrom). Until then the index shows a
// reserved node's vector from before the reservation, which nothing
// reads: every read of a reserved node goes through its mask (holding)
// or its true vector (r.real). Every search sees the masked index, so the
// placements are those of masking at once (straight, which the tests
// compare against).

// maskReserved computes reserved node's mask: the least of its true free
// vector and every reservation's spare on it (none below zero), what a
// task that may run at all their starts can use. The index shows it at
// once unless the masks are still pending.
func (e *Engine) maskReserved(node int) {
	r := &e.resv
	k := len(e.capacity)
	first := int(r.slot[node])
	m := ledger.Vector(r.mask[first*k : first*k+k])
	copy(m, r.real[first*k:first*k+k])
	for s := first; s >= 0; s = int(r.next[s]) {
		for j, q := range r.spare[s*k : s*k+k] {
			m[j] = min(m[j], q)
		}
	}
	for j := range m {
		m[j] = max(m[j], 0)
	}
	if !r.pending {
		e.index.Restore(node, m)
	}
}

// applyMasks writes the pending masks into the index, before a search.
func (e *Engine) applyMasks() {
	r := &e.resv
	if !r.pending {
		return
	}
	r.pending = false
	k := len(e.capacity)
	for s, node := range r.nodes {
		if int(r.slot[node]) == s {
			e.index.Restore(node, r.mask[s*k:s*k+k])
		}
	}
}

// mayFitMasked reports whether a one-node task of job (demand d) may fit
// some node: false only while the masks are pending and no node's masked
// vector holds d, when a search would find none. It spares such a claim
// writing the masks; once they are written, the search answers itself.
func (e *Engine) mayFitMasked(job *Job, d ledger.Vector) bool {
	if !e.resv.pending || job.Exclusive {
		return true
	}
	return e.holding(d, 0, false, 1)
}
