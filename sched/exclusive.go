package sched

import "github.com/longfair/longfair/ledger"

// Exclusive jobs. A job that takes its nodes whole (Slurm's --exclusive)
// comes with a node class's capacity as its per-node demand (the FSM
// chooses the class at submission), so everything that counts demand —
// fairness, ranking, the SU charge — counts whole nodes with no special
// case. Only where it may go differs: a node of exactly that capacity,
// idle. Fitting is not enough, since a larger node would fit the demand
// and run other tasks beside it. The search for such a node is a look-up
// among the nodes with that free vector (place.Index.Idle), and the lowest
// index wins, as under every strategy idle twins tie; a gang of them is
// claimed as any other (gang.go), and backfill's reservation counts a
// node as holding the job only when it is of the class.

// bestFor is the node claim takes next for job's per-node demand d.
func (e *Engine) bestFor(job *Job, d ledger.Vector) (int, bool) {
	e.applyMasks()
	if job.Exclusive {
		return e.index.Idle(d, e.fleet.caps)
	}
	return e.index.Best(d)
}

// holdsOn reports whether node, with free vector free, holds a task of
// job: the per-node demand fits, and for an exclusive job the node is of
// its class (then fitting means idle).
func (e *Engine) holdsOn(job *Job, node int, free ledger.Vector) bool {
	d := job.nodeDemand()
	if !free.Fits(d) {
		return false
	}
	return !job.Exclusive || sameVector(e.fleet.caps[node], d)
}

// holdsWhole is fleet.holds for an exclusive job: enough nodes of exactly
// its class.
func (fl *fleet) holdsWhole(job *Job) bool {
	if !fl.counted {
		fl.countClasses()
	}
	d := job.nodeDemand()
	for i := range fl.classes {
		if sameVector(fl.classes[i].capacity, d) {
			return fl.classes[i].count >= max(job.Nodes, 1)
		}
	}
	return false
}

// sameVector reports whether a and b are equal in every resource.
func sameVector(a, b ledger.Vector) bool {
	if len(a) != len(b) {
		return false
	}
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return true
}
