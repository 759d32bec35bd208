package sched

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// QKnobler (Tang, Yu, Li: "Fairness-Efficiency Scheduling for Cloud Computing
// with Soft Fairness Guarantees") splits every allocation into a
// fairness-oriented part and an efficiency-oriented part with a knob
// ρ ∈ [0,1] (Settings.QKnoblerRho):
//
//   - fairness-oriented: DRF progressive filling, but only until each account
//     holds ρ of the dominant share s_max it would get under DRF;
//   - efficiency-oriented: the rest goes, task by task, to the task with the
//     highest affinity (dot product of its demand and the idle vector of the
//     node it would go to), whoever it belongs to (§6.1, C3).
//
// s_max is estimated every pass (§6.1): C2 counts each account's running
// tasks and its pending tasks in queue order until they would fill the
// cluster's idle space (first fit); C1 computes DRF's divisible allocation
// for those finite demands by water filling, so an account that would be
// satisfied early does not hold a limit it can never use (knobEstimate).
//
// At ρ = 1 the fairness-oriented stage leaves nothing (§5.2.1: r'_k = 0 for
// the resource DRF saturates) and qknobler is DRF; the engine then runs drf's
// own pass, so that this holds exactly even where the estimate of s_max is off
// because tasks are indivisible or nodes fragmented.

// classUnderKnob ranks accounts still below ρ·s_max (fairness-oriented)
// after starving ones and before everyone else.
const classUnderKnob = classSharingLoss

// knobScratch is qknobler's per-pass memory.
type knobScratch struct {
	limit  []float64       // ρ·s_max/w per account: the weighted dominant share of its fairness stage
	demand []ledger.Vector // C2 estimate of each account's demand: running plus first-fit pending
	room   ledger.Vector   // the cluster's idle space, for the first-fit count
	left   ledger.Vector   // what is left of room while one account's tasks are counted
	fill   waterFill
}

// qknoblerPass runs a pass under qknobler with ρ < 1, after prepare.
func (e *Engine) qknoblerPass(v *View) {
	e.knobEstimate(v)
	key := func(a int) rankKey {
		f := &e.fair[a]
		s := dominantShare(f.running, e.capacity, f.weight)
		if s < e.knob.limit[a] {
			return rankKey{class: classUnderKnob, a: s, account: a}
		}
		return rankKey{class: classNormal, a: s, account: a}
	}
	e.rekey(key)
	for e.heap.len() > 0 {
		a := e.heap.top()
		if e.heap.keys[a].class != classNormal {
			// Fairness-oriented: a starving account, or one below its
			// limit, is served exactly as drf would serve it.
			node, ok := e.index.Best(e.head(v, a))
			if !ok {
				e.heap.remove(a)
				continue
			}
			if e.placeNext(v, a, node) {
				e.heap.update(a, key(a))
			}
			continue
		}
		// Efficiency-oriented: every remaining account is past its limit.
		a, node, ok := e.mostAffine(v)
		if !ok {
			return
		}
		if e.placeNext(v, a, node) {
			e.heap.update(a, key(a))
		}
	}
}

// mostAffine picks, among the candidates' next tasks, the one with the
// highest affinity to the node the placement strategy would give it, and
// drops candidates whose next task fits nowhere. Equal scores go to the
// account listed first.
func (e *Engine) mostAffine(v *View) (account, node int, ok bool) {
	e.members = append(e.members[:0], e.heap.items...)
	best := math.Inf(-1)
	for _, a := range e.members {
		d := e.head(v, a)
		n, fits := e.index.Best(d)
		if !fits {
			e.heap.remove(a)
			continue
		}
		score := affinity(d, e.index.Free(n), e.capacity)
		if !ok || score > best || (score == best && a < account) {
			account, node, best, ok = a, n, score, true
		}
	}
	return account, node, ok
}

// affinity is Σ_k (d_k/R_k)·(idle_k/R_k): the paper's dot product of demand
// and idle vector, each resource normalized by the cluster's capacity so that
// bytes do not outweigh cores.
func affinity(demand, idle, capacity ledger.Vector) float64 {
	s := 0.0
	for k, d := range demand {
		if capacity[k] > 0 {
			s += d / capacity[k] * idle[k] / capacity[k]
		}
	}
	return s
}

// knobEstimate sets each account's fairness-stage limit ρ·s_max/w for this
// pass (C1 and C2 of §6.1).
func (e *Engine) knobEstimate(v *View) {
	k := &e.knob
	n := len(v.Resources)
	k.room = resize(k.room, n)
	clear(k.room)
	for i := range v.Nodes {
		k.room.Add(v.Nodes[i].Free)
	}
	k.demand = resize(k.demand, len(v.Accounts))
	k.limit = resize(k.limit, len(v.Accounts))
	for a := range v.Accounts {
		k.demand[a] = copyInto(k.demand[a], v.Accounts[a].Running)
		k.left = copyInto(k.left, k.room)
		firstFit(k.demand[a], v.Accounts[a].Queue, k.left)
	}
	level := k.fill.levels(e.capacity, k.demand, e.weights())
	rho := v.Settings.QKnoblerRho
	for a := range k.limit {
		k.limit[a] = rho * level[a]
	}
}

// weights returns the pass's normalized weights (w_i/Σw, as prepare set them).
func (e *Engine) weights() []float64 {
	e.knob.fill.w = resize(e.knob.fill.w, len(e.fair))
	for a := range e.fair {
		e.knob.fill.w[a] = e.fair[a].weight
	}
	return e.knob.fill.w
}

// firstFit adds to total the account's pending tasks in queue order for as
// long as they fit in left, the idle space, which it uses up (C2: "we count
// the pending tasks in the queue order until the cluster can be filled").
// Tasks of one job are identical, so a job is counted in one step.
func firstFit(total ledger.Vector, queue []Job, left ledger.Vector) {
	for _, job := range queue {
		if job.Pending <= 0 {
			continue
		}
		fit := float64(job.Pending)
		for r, d := range job.Demand {
			if d > 0 {
				fit = math.Min(fit, math.Floor((left[r]+1e-9)/d))
			}
		}
		fit = math.Max(fit, 0)
		for r, d := range job.Demand {
			total[r] += fit * d
			left[r] -= fit * d
		}
		if fit < float64(job.Pending) {
			return
		}
	}
}
