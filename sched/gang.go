package sched

import (
	"encoding/binary"
	"math"

	"github.com/longfair/longfair/ledger"
)

// Parallel jobs. A task of a job with Nodes > 1 spans that many distinct
// nodes, PerNode on each, all at once: an MPI run, not an array. The
// engine places such a task whole or not at all (a gang): it asks the
// placement index for the best node for PerNode, takes it, and asks again,
// Nodes times; when a node is missing it restores every node it took to
// the exact free vector it had (place.Index.Restore), so a gang that does
// not fit leaves the pass exactly as it found it. Each node is the
// strategy's best for PerNode among those left, so best-fit packs the gang
// onto the fullest nodes that hold it (fewest fragments) and nodes of one
// class, having equal free vectors, are taken together before another
// class is broken into. Every step is a pure function of the view, so the
// placement is as deterministic as a one-node task's.
//
// Everything else sees the whole allocation: Demand is Nodes × PerNode, and
// that is what the account's running vector, its usage and every policy's
// rank count.

// nodeDemand is what one task of job takes on each node it is placed on.
func (j *Job) nodeDemand() ledger.Vector {
	if j.Nodes > 1 {
		return j.PerNode
	}
	return j.Demand
}

// claim takes the nodes of one task of account a's next job from the
// index, all or none, and reports whether it did; the nodes, head first,
// are in e.claimed until the next claim. With backfill, a task that does
// not fit may fit around the pass's reservation, and the first that does
// not fit gets the reservation (backfill.go).
func (e *Engine) claim(a int, job *Job) bool {
	if e.claimFree(job) {
		e.notePlaced(job)
		return true
	}
	if e.claimBeforeReservation(job) {
		return true
	}
	e.reserve(a, e.cursor[a].job, job)
	// Without backfill nothing starts after the first job that cannot.
	e.halted = e.view != nil && e.view.Settings.Backfill == BackfillNone
	return false
}

// claimFree is claim on the index's free vectors; nothing fits once a
// pass without backfill has halted.
func (e *Engine) claimFree(job *Job) bool {
	if e.halted {
		return false
	}
	d := job.nodeDemand()
	e.claimed = e.claimed[:0]
	if job.Nodes <= 1 {
		if !e.mayFitMasked(job, d) {
			return false
		}
		n, ok := e.bestFor(job, d)
		if !ok {
			return false
		}
		e.index.Take(n, d)
		e.resv.version++
		e.claimed = append(e.claimed, n)
		return true
	}
	// Each node once chosen is set to what it had less the per-node
	// demand — the very arithmetic Take does — when d no longer fits
	// that, so that the next search finds another node: a search returns
	// only nodes d fits, whatever the others hold. Otherwise (a node
	// holding d twice, an exclusive job) it is masked (set to zero) and
	// set to that at the end. When the gang does not fit, every node goes
	// back to what it had.
	k := len(d)
	e.saved, e.settled = e.saved[:0], e.settled[:0]
	e.zero = resize(e.zero, k)
	clear(e.zero)
	if !job.Exclusive && !ledger.Vector(e.zero).Fits(d) && !e.enoughHold(d, job.Nodes) {
		// Each search below returns a node d fits and masks it, which d
		// then no longer fits: the gang is placed exactly when job.Nodes
		// nodes hold d now. Counting them first spares a gang that does
		// not fit its searches and the masks it would undo.
		return false
	}
	for len(e.claimed) < job.Nodes {
		n, ok := e.bestFor(job, d)
		if !ok {
			for i, n := range e.claimed {
				e.index.Restore(n, e.saved[i*k:i*k+k])
			}
			e.claimed = e.claimed[:0]
			return false
		}
		e.saved = append(e.saved, e.index.Free(n)...)
		e.left = copyInto(e.left, e.index.Free(n))
		e.left.Sub(d)
		settled := !job.Exclusive && !e.left.Fits(d) && !e.resv.straight
		if settled {
			e.index.Restore(n, e.left)
		} else {
			e.index.Restore(n, e.zero)
		}
		e.settled = append(e.settled, settled)
		e.claimed = append(e.claimed, n)
	}
	for i, n := range e.claimed {
		if e.settled[i] {
			continue
		}
		left := ledger.Vector(e.saved[i*k : i*k+k])
		left.Sub(d)
		e.index.Restore(n, left)
	}
	e.resv.version++
	return true
}

// enoughHold reports whether at least need nodes of the index hold d.
func (e *Engine) enoughHold(d ledger.Vector, need int) bool {
	return e.holding(d, 0, false, need)
}

// claimFrom is claim for a job whose head node the caller has already
// found with Best (node): a one-node task takes it without a second search.
func (e *Engine) claimFrom(job *Job, node int) bool {
	if e.halted {
		return false
	}
	if job.Nodes > 1 || job.Exclusive {
		if !e.claimFree(job) {
			return false
		}
	} else {
		e.applyMasks() // the node was found before: Take must see its mask
		e.index.Take(node, job.Demand)
		e.resv.version++
		e.claimed = append(e.claimed[:0], node)
	}
	e.notePlaced(job)
	return true
}

// record appends the placement of task of account a's job (queue index
// job) on the nodes claim just took.
func (e *Engine) record(a, job, task int) {
	p := Placement{Account: a, Job: job, Task: task, Node: e.claimed[0]}
	if len(e.claimed) > 1 {
		at := len(e.gangNodes)
		e.gangNodes = append(e.gangNodes, e.claimed...)
		p.Nodes = e.gangNodes[at:len(e.gangNodes):len(e.gangNodes)]
	}
	e.out = append(e.out, p)
}

// fleet is what a pass knows of its nodes' capacities: whether they could
// hold a job's task if they were idle.
type fleet struct {
	caps []ledger.Vector
	// shapes are the largest node shapes: a one-node task that fits none
	// of them fits no node even idle.
	shapes ledger.Shapes
	// classes are the distinct capacities with their counts, for parallel
	// jobs; counted once per pass, when a parallel job first asks.
	classes []nodeClass
	classOf map[string]int
	counted bool
	// last holds the capacities of the previous reset, k each, bit for
	// bit: when a pass's are the same (the usual case: nodes rarely join
	// or leave), shapes and classes carry over instead of being rebuilt.
	last []float64
	// lastOK says shapes were built from last (and classes too, if
	// counted).
	lastOK bool
}

// reset makes the fleet the nodes whose capacities are caps (kept, not
// copied), and reports whether they are the last reset's, bit for bit.
func (fl *fleet) reset(caps []ledger.Vector) bool {
	fl.caps = caps
	if fl.lastOK && fl.sameAsLast(caps) {
		// Classes point into caps, which may be new memory for the same
		// values: point them at this pass's vectors.
		for i := range fl.classes {
			fl.classes[i].capacity = caps[fl.classes[i].first]
		}
		return true
	}
	fl.shapes, fl.counted = fl.shapes[:0], false
	fl.last = fl.last[:0]
	fl.lastOK = true
	for _, c := range caps {
		fl.last = append(fl.last, c...)
		if len(c) != len(caps[0]) {
			fl.lastOK = false // ragged: never compared against
		}
	}
	for i, c := range caps {
		if fl.lastOK {
			// The shapes keep the vectors they are given: our own copy,
			// which a later pass that reuses them cannot have changed.
			k := len(c)
			c = fl.last[i*k : i*k+k : i*k+k]
		}
		fl.shapes = fl.shapes.Add(c)
	}
	return false
}

// sameAsLast reports whether caps are the capacities of the last reset,
// bit for bit.
func (fl *fleet) sameAsLast(caps []ledger.Vector) bool {
	if len(caps) == 0 {
		return len(fl.last) == 0
	}
	k := len(caps[0])
	if len(caps)*k != len(fl.last) {
		return false
	}
	for i, c := range caps {
		if len(c) != k {
			return false
		}
		for j, q := range c {
			if math.Float64bits(q) != math.Float64bits(fl.last[i*k+j]) {
				return false
			}
		}
	}
	return true
}

// holds reports whether the nodes could hold one task of job if they were
// idle: one node of shapes for a one-node job, Nodes distinct nodes whose
// capacity holds PerNode for a parallel job. A job they cannot hold is
// passed over (nextJob): waiting would not let it start.
func (fl *fleet) holds(job *Job) bool {
	if job.Exclusive {
		return fl.holdsWhole(job)
	}
	if job.Nodes <= 1 {
		return fl.shapes.Holds(job.Demand)
	}
	if !fl.counted {
		fl.countClasses()
	}
	n := 0
	for i := range fl.classes {
		if fl.classes[i].capacity.Fits(job.PerNode) {
			if n += fl.classes[i].count; n >= job.Nodes {
				return true
			}
		}
	}
	return false
}

// nodeClass is a capacity vector of the pass's nodes and how many have it.
type nodeClass struct {
	capacity ledger.Vector
	count    int
	// first is the lowest index of a node of the class.
	first int
}

// countClasses groups the node capacities for holds, once per
// pass and only when a parallel job asks. Nodes of a centre come in a few
// classes, so the list is short and holds cheap.
func (fl *fleet) countClasses() {
	fl.classes = fl.classes[:0]
	if fl.classOf == nil {
		fl.classOf = make(map[string]int)
	}
	clear(fl.classOf)
	var key []byte
	for n, c := range fl.caps {
		key = key[:0]
		for _, q := range c {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(q))
		}
		if i, ok := fl.classOf[string(key)]; ok {
			fl.classes[i].count++
			continue
		}
		fl.classOf[string(key)] = len(fl.classes)
		fl.classes = append(fl.classes, nodeClass{capacity: c, count: 1, first: n})
	}
	fl.counted = true
}
