package sched

import (
	"fmt"
	"slices"

	"github.com/longfair/longfair/ledger"
)

// Backfill with a reservation (EASY backfilling, Lifka 1995), in the
// policy's own order. When a pass meets the first job that cannot start —
// its account ranked first among those left, its next task fitting no
// free nodes (claim fails) — and the nodes could hold it if enough of
// their running tasks ended, the pass reserves for it: the earliest time
// T at which enough nodes are free, from the running tasks' expected ends
// (Node.Releases: each task's start plus its walltime, when it is
// stopped at the latest) and the tasks this pass placed before, and the
// nodes that hold it then, those that fit soonest (lowest index on ties).
// From then on every placement of the pass leaves the reservation whole:
//
//   - on the reserved nodes, a task that may still run at T (its walltime
//     reaches past T, or is unknown) gets only what the node has spare at
//     T beyond the reserved share; the placement index sees each reserved
//     node's free vector cut down to min(free, spare at T), so every
//     policy's search keeps to it without knowing of it;
//   - a one-node task that surely ends before T (now + walltime ≤ T) may
//     also use a reserved node's true free resources (claimBeforeReservation);
//   - the other nodes are not needed by the reservation and are free for
//     everything.
//
// So backfilled work never delays the reserved job's start, and the
// reserved job is the first ranked one: wide jobs do not starve behind
// streams of narrow ones. One reservation per pass under EASY; the next
// pass computes it afresh from the then running tasks, so it moves only
// earlier, as tasks end before their walltime.
//
// Conservative backfill reserves for the first K jobs that cannot start
// (Settings.Reservations). The k-th is made like the first, counting what
// the pass placed so far, except that a node an earlier reservation holds
// counts for it only from when that reservation's job ends at the latest
// (its start plus its walltime; never, without one): so no reservation
// delays an earlier one. Each reserved node keeps one spare vector per
// reservation on it, and every later placement keeps all K whole: a task
// gets what every reservation whose start it may run past leaves spare.
// K = 1 is EASY exactly. Everything is computed from
// the view and the pass's own placements, in a fixed order, so the pass is
// as deterministic as without it.

// Backfill says what a pass does when the first job in the policy's order
// cannot start.
type Backfill string

// Backfill modes.
const (
	// BackfillGreedy, the zero value, goes on filling: every later task
	// that fits starts (the papers' progressive filling). Nothing is
	// reserved, so a wide job can wait behind a stream of narrow ones
	// for as long as they keep coming.
	BackfillGreedy Backfill = "greedy"
	// BackfillNone stops the pass there: nothing after the first job that
	// cannot start starts before it (strict order, as Slurm without its
	// backfill plugin). Nothing starves, and nodes idle meanwhile.
	BackfillNone Backfill = "none"
	// BackfillEASY reserves for that job and lets later work start only
	// where it cannot delay the reservation (above).
	BackfillEASY Backfill = "easy"
	// BackfillConservative reserves for the first Settings.Reservations
	// jobs that cannot start (DefaultReservations when zero), and lets
	// later work start only where it delays none of them.
	BackfillConservative Backfill = "conservative"
)

// DefaultReservations is how many jobs conservative backfill reserves for
// when Settings.Reservations is zero, chosen by measurement on the
// archive's logs (README, "Backfill on the archive's logs").
const DefaultReservations = 2

// reservationLimit is how many reservations a pass makes: 1 under EASY,
// K under conservative backfill, none otherwise.
func (s *Settings) reservationLimit() int {
	switch s.Backfill {
	case BackfillEASY:
		return 1
	case BackfillConservative:
		if s.Reservations > 0 {
			return s.Reservations
		}
		return DefaultReservations
	}
	return 0
}

// ParseBackfill returns the backfill mode named s ("" is greedy).
func ParseBackfill(s string) (Backfill, error) {
	switch b := Backfill(s); b {
	case "", BackfillGreedy:
		return BackfillGreedy, nil
	case BackfillNone, BackfillEASY, BackfillConservative:
		return b, nil
	}
	return "", fmt.Errorf("unknown backfill %q: want easy, conservative, none or greedy", s)
}

// Release is what a running task gives back to its node when it ends at
// the latest: at its start plus its walltime.
type Release struct {
	At   ledger.Time
	Free ledger.Vector
}

// reservation is the pass's reservations, once made.
type reservation struct {
	made bool
	// jobs are the reserved jobs in the order reserved, the first ranked
	// first; each holds the entries [from, to).
	jobs []reservedJob
	// An entry is one reserved node of one reservation: nodes is its
	// node, at its reservation's start T, spare what the node has at T
	// beyond the reserved share (k entries each), and next the node's
	// next entry (-1: none). slot maps a node index to its first entry
	// (-1: not reserved), valid once one is made; real, at a node's first
	// entry, is the node's true free vector now (k entries each).
	nodes       []int
	next        []int32
	slot        []int32
	at          []ledger.Time
	real, spare []float64
	// mask, at a node's first entry, is what the index is to show of the
	// node (maskReserved); pending says the index does not show the masks
	// yet (backfill_masks.go).
	mask    []float64
	pending bool
	// counts remembers how many nodes hold a demand (backfill_counts.go)
	// while version, which every change to what they count moves on, is
	// countsAt; countD holds their demands.
	counts            []heldCount
	countD            []float64
	version, countsAt uint64
	// straight makes the pass take the straightforward paths the speed-ups
	// must match (the tests set it): masks written at once, counts never
	// remembered, every node of a gang masked while it is claimed.
	straight bool
	// events are what the pass's placements give back, and when;
	// viewReleases says the view's nodes list any.
	events       []releaseEvent
	viewReleases bool
	// Scratch for earliest (backfill_earliest.go), reserve and the masks.
	free    []float64
	copied  []bool
	fitAt   []ledger.Time
	ordered []int
	cands   []fitKey
	times   []int64
	evs     []Release
	evStart []int32
	evOrder []int32
	walked  []int32
	allowed ledger.Vector
	zero    ledger.Vector
}

// reservedJob is one reservation: account a's queue entry job, reserved
// to start at at on nodes[from:to].
type reservedJob struct {
	account, job int
	at           ledger.Time
	from, to     int
	// end is when the reserved job ends at the latest, if ends (it has
	// a walltime): its nodes are free for later reservations from then.
	end  ledger.Time
	ends bool
}

// releaseEvent is a Release on node.
type releaseEvent struct {
	at   ledger.Time
	node int
	free ledger.Vector
}

// resetBackfill readies the pass's backfill state.
func (e *Engine) resetBackfill() {
	r := &e.resv
	r.made, e.halted = false, false
	r.jobs, r.nodes, r.at, r.next = r.jobs[:0], r.nodes[:0], r.at[:0], r.next[:0]
	r.real, r.spare, r.mask = r.real[:0], r.spare[:0], r.mask[:0]
	r.pending = false
	r.version++
	r.events = r.events[:0]
	r.viewReleases = false
	if e.backfilling() {
		for i := range e.view.Nodes {
			if len(e.view.Nodes[i].Releases) > 0 {
				r.viewReleases = true
				break
			}
		}
	}
}

// backfilling reports whether the pass reserves.
func (e *Engine) backfilling() bool { return e.view != nil && e.view.Settings.reservationLimit() > 0 }

// reserving reports whether the pass may still make a reservation.
func (e *Engine) reserving() bool {
	return e.backfilling() && len(e.resv.jobs) < e.view.Settings.reservationLimit()
}

// notePlaced records, for a later reservation, when the task just placed
// on e.claimed gives its nodes back, and keeps a made reservation's
// books: what the task took from a reserved node's true free vector,
// and, unless it surely ends before T, from its spare.
func (e *Engine) notePlaced(job *Job) {
	if !e.backfilling() {
		return
	}
	r := &e.resv
	d := job.nodeDemand()
	end, ends := e.endOf(job)
	e.noteEvents(d, end, ends)
	if !r.made {
		return
	}
	for _, n := range e.claimed {
		if r.slot[n] < 0 {
			continue
		}
		e.takeReserved(n, d, end, ends)
		e.maskReserved(n)
	}
}

// takeReserved books a task of per-node demand d, ending at end (if
// ends), on reserved node: off its true free vector, and off the spare of
// every reservation on it whose start the task may run past.
func (e *Engine) takeReserved(node int, d ledger.Vector, end ledger.Time, ends bool) {
	r := &e.resv
	r.version++
	k := len(d)
	first := int(r.slot[node])
	ledger.Vector(r.real[first*k : first*k+k]).Sub(d)
	for s := first; s >= 0; s = int(r.next[s]) {
		if !ends || end > r.at[s] {
			ledger.Vector(r.spare[s*k : s*k+k]).Sub(d)
		}
	}
}

// allowed is what a task ending at end can take on reserved node: its
// true free vector, cut down to the spare of every reservation on it
// whose start the task runs past (none: the true free vector, bit for
// bit). It is valid until the next call.
func (e *Engine) allowed(node int, end ledger.Time) ledger.Vector {
	r := &e.resv
	k := len(e.capacity)
	first := int(r.slot[node])
	r.allowed = copyInto(r.allowed, r.real[first*k:first*k+k])
	cut := false
	for s := first; s >= 0; s = int(r.next[s]) {
		if end > r.at[s] {
			cut = true
			for j, q := range r.spare[s*k : s*k+k] {
				r.allowed[j] = min(r.allowed[j], q)
			}
		}
	}
	if cut {
		for j := range r.allowed {
			r.allowed[j] = max(r.allowed[j], 0)
		}
	}
	return r.allowed
}

// endsBeforeSome reports whether a task ending at end ends before the
// start of some reservation on reserved node: whether it may use more of
// the node than its mask.
func (r *reservation) endsBeforeSome(node int, end ledger.Time) bool {
	for s := int(r.slot[node]); s >= 0; s = int(r.next[s]) {
		if end <= r.at[s] {
			return true
		}
	}
	return false
}

// freeFrom is when reserved node is free for a later reservation: when
// the last of the jobs reserved on it ends, and whether that is known.
func (r *reservation) freeFrom(node int) (ledger.Time, bool) {
	var from ledger.Time
	for s := int(r.slot[node]); s >= 0; s = int(r.next[s]) {
		j := r.jobOf(s)
		if !j.ends {
			return 0, false
		}
		from = max(from, j.end)
	}
	return from, true
}

// jobOf is the reservation entry s belongs to.
func (r *reservation) jobOf(s int) *reservedJob {
	for i := range r.jobs {
		if s < r.jobs[i].to {
			return &r.jobs[i]
		}
	}
	return &r.jobs[len(r.jobs)-1]
}

// noteEvents records, while the pass may still reserve, that the task
// just placed on e.claimed gives d back to each of its nodes at end.
func (e *Engine) noteEvents(d ledger.Vector, end ledger.Time, ends bool) {
	if !ends || !e.reserving() {
		return
	}
	for _, n := range e.claimed {
		e.resv.events = append(e.resv.events, releaseEvent{at: end, node: n, free: d})
	}
}

// reservedNode reports whether node is held by a reservation made.
func (r *reservation) reservedNode(node int) bool { return r.made && r.slot[node] >= 0 }

// endOf is when a task of job placed now ends at the latest, and whether
// that is known (a walltime is given).
func (e *Engine) endOf(job *Job) (ledger.Time, bool) {
	if job.Walltime <= 0 {
		return 0, false
	}
	return e.view.Now.Add(job.Walltime), true
}

// reserve makes a reservation for job, account a's queue entry at index
// jobIndex, which does not fit the free nodes now, while the pass may
// make one more: the earliest time enough nodes no earlier reservation
// holds hold it as the running tasks end, and the nodes, those that hold
// it soonest (lowest index on ties). It makes none when no time is known
// at which they would (tasks without a walltime, or too few nodes even
// then), or under the static policy, whose partitions a reservation would
// cut across.
func (e *Engine) reserve(a, jobIndex int, job *Job) {
	r := &e.resv
	if !e.reserving() || e.share != nil {
		return
	}
	if !r.viewReleases && len(r.events) == 0 {
		// Nothing running will free anything: no time to reserve at,
		// and no need to look at every node to find that out.
		return
	}
	at, ok := e.earliest(job)
	if !ok {
		return
	}
	n, k := e.index.Len(), len(e.capacity)
	d, need := job.nodeDemand(), max(job.Nodes, 1)
	// The pass's first reservation carries the counts taken before it
	// over (carryCounts), rather than have them all taken again.
	carry := !r.made && r.countsAt == r.version && !r.straight
	if !r.made {
		r.slot = resize(r.slot, n)
		for i := range r.slot {
			r.slot[i] = -1
		}
		r.made = true
		// The masks reach the index only when a search needs them
		// (applyMasks): most passes search no more after reserving.
		r.pending = !r.straight
	}
	from := len(r.nodes)
	r.nodes = append(r.nodes, r.ordered...)
	end, ends := at.Add(job.Walltime), job.Walltime > 0
	r.version++
	r.jobs = append(r.jobs, reservedJob{account: a, job: jobIndex, at: at, from: from, to: len(r.nodes), end: end, ends: ends})
	r.real, r.spare = slices.Grow(r.real, need*k)[:len(r.nodes)*k], slices.Grow(r.spare, need*k)[:len(r.nodes)*k]
	r.mask = slices.Grow(r.mask, need*k)[:len(r.nodes)*k]
	for s := from; s < len(r.nodes); s++ {
		node := r.nodes[s]
		r.at = append(r.at, at)
		r.next = append(r.next, -1)
		spare := ledger.Vector(r.spare[s*k : s*k+k])
		copy(spare, e.freeAt(node))
		spare.Sub(d)
		if first := r.slot[node]; first < 0 {
			r.slot[node] = int32(s)
			trueFree := r.real[s*k : s*k+k]
			copy(trueFree, e.index.Free(node))
			if r.pending {
				// maskReserved for a node with this one entry, spelled
				// out (the same arithmetic): most reserved nodes.
				for j, q := range spare {
					r.mask[s*k+j] = max(min(trueFree[j], q), 0)
				}
				continue
			}
		} else {
			last := int(first)
			for r.next[last] >= 0 {
				last = int(r.next[last])
			}
			r.next[last] = int32(s)
		}
		e.maskReserved(node)
	}
	if carry {
		e.carryCounts()
	}
}

// claimBeforeReservation places a task that surely ends before a
// reservation's start on more of that reservation's nodes than their
// masks: what allowed leaves it (all of a node's true free vector under
// EASY): a one-node task on the first reserved node, in the order
// reserved, that holds it, a parallel task wherever claimFree puts it
// with those nodes unmasked so. It reports whether it did.
func (e *Engine) claimBeforeReservation(job *Job) bool {
	r := &e.resv
	if !r.made {
		return false
	}
	end, ends := e.endOf(job)
	if !ends {
		return false
	}
	d := job.nodeDemand()
	if job.Nodes > 1 {
		// Gone by a reservation's T, the task takes nothing from its
		// reserved share: only the node's true free vector changes, and
		// the mask follows it.
		if !e.mayHoldBefore(job, d, end) {
			return false
		}
		// The unmasking below and claimFree's search work on the index
		// as it shows the masks.
		e.applyMasks()
		unmasked := false
		for s, node := range r.nodes {
			if int(r.slot[node]) == s && r.endsBeforeSome(node, end) {
				e.index.Restore(node, e.allowed(node, end))
				unmasked = true
			}
		}
		if !unmasked {
			return false
		}
		r.version++ // counts of the masked nodes no longer hold
		ok := e.claimFree(job)
		if ok {
			for _, n := range e.claimed {
				if r.slot[n] >= 0 {
					e.takeReserved(n, d, end, ends)
				}
			}
			e.noteEvents(d, end, ends)
		}
		for s, node := range r.nodes {
			if int(r.slot[node]) == s {
				e.maskReserved(node)
			}
		}
		r.version++
		return ok
	}
	for s, node := range r.nodes {
		if end > r.at[s] {
			continue
		}
		if !e.holdsOn(job, node, e.allowed(node, end)) {
			continue
		}
		e.takeReserved(node, d, end, ends)
		e.maskReserved(node)
		e.claimed = append(e.claimed[:0], node)
		e.noteEvents(d, end, ends)
		return true
	}
	return false
}

// mayHoldBefore reports whether a parallel task of job (per-node demand
// d, ending at end) may fit with the reserved nodes it ends before
// unmasked: false only when it surely does not, because fewer than
// job.Nodes nodes hold d then (claimFree places such a gang exactly when
// that many do; see there), or no reserved node would be unmasked (the
// task ends before no reservation's start). It changes nothing, so a gang
// that cannot fit costs no masks undone and redone.
func (e *Engine) mayHoldBefore(job *Job, d ledger.Vector, end ledger.Time) bool {
	e.zero = resize(e.zero, len(d))
	clear(e.zero)
	if job.Exclusive || ledger.Vector(e.zero).Fits(d) {
		return true
	}
	if !e.resv.endsBeforeAny(end) {
		return false
	}
	return e.holding(d, end, true, job.Nodes)
}

// Reservation is the reservation a pass made, if any.
type Reservation struct {
	// Account and Job index the View: the reserved job is
	// v.Accounts[Account].Queue[Job].
	Account, Job int
	// At is the reserved start; Nodes the reserved nodes (View indices).
	At    ledger.Time
	Nodes []int
}

// LastReservation returns the reservation the last pass made, and false
// when it made none. Its Nodes are valid until the next pass.
func (e *Engine) LastReservation() (Reservation, bool) {
	r := &e.resv
	if len(r.jobs) == 0 {
		return Reservation{}, false
	}
	return r.reservation(0), true
}

// LastReservations appends to dst the reservations the last pass made, the
// first ranked first (one at most under EASY), and returns it. Their Nodes
// are valid until the next pass.
func (e *Engine) LastReservations(dst []Reservation) []Reservation {
	for i := range e.resv.jobs {
		dst = append(dst, e.resv.reservation(i))
	}
	return dst
}

// reservation is the i-th reservation made.
func (r *reservation) reservation(i int) Reservation {
	j := &r.jobs[i]
	return Reservation{Account: j.account, Job: j.job, At: j.at, Nodes: r.nodes[j.from:j.to:j.to]}
}
