package sched

import (
	"math"

	"github.com/longfair/longfair/core"
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
	scale  ledger.Vector // 1/M_k², M_k the largest capacity of resource k on one node
	offers offerHeap     // efficiency stage: each account's next task and its node
	// exhaustive re-scores every offer at every placement even under
	// affinity placement; tests check the lazy stage against it.
	exhaustive bool
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
			if !e.claim(a, e.head(v, a)) {
				e.heap.remove(a)
				continue
			}
			if e.placeNext(v, a) {
				e.heap.update(a, key(a))
			}
			continue
		}
		// Efficiency-oriented: every remaining account is past its limit,
		// and stays so (shares only grow within a pass).
		e.efficiencyStage(v, key)
		return
	}
}

// efficiencyStage places, until nothing fits, the next task with the highest
// affinity to the node the placement strategy gives it, whoever's it is
// (C3). Equal scores go to the account listed first.
//
// Under affinity placement that node is the one with the best score, and a
// placement only lowers one node's idle vector, so no account's best score
// ever rises within the pass: scores computed earlier are upper bounds, and
// the offers heap only re-scores the offer on top until it is current
// (lazy greedy). Other strategies do not give that bound, so every offer is
// re-scored at every placement.
func (e *Engine) efficiencyStage(v *View, key func(a int) rankKey) {
	h := &e.knob.offers
	h.items = h.items[:0]
	lazy := v.Settings.Placement == Affinity && !e.knob.exhaustive
	e.members = append(e.members[:0], e.heap.items...)
	for _, a := range e.members {
		if o, ok := e.offer(v, a); ok {
			h.push(o)
		} else {
			e.heap.remove(a) // fits nowhere now, so nowhere later in this pass
		}
	}
	for len(h.items) > 0 {
		if !lazy {
			e.rescoreAll(v)
			if len(h.items) == 0 {
				return
			}
		}
		top := h.pop()
		o, ok := e.offer(v, top.account)
		if !ok {
			e.heap.remove(top.account)
			continue
		}
		if lazy && o.score < top.score {
			h.push(o) // stale: back in line with its current score
			continue
		}
		if !e.claimFrom(e.head(v, o.account), o.node) {
			e.heap.remove(o.account)
			continue
		}
		if !e.placeNext(v, o.account) {
			continue
		}
		e.heap.update(o.account, key(o.account))
		if next, ok := e.offer(v, o.account); ok {
			h.push(next)
		} else {
			e.heap.remove(o.account)
		}
	}
}

// rescoreAll replaces every offer with a current one.
func (e *Engine) rescoreAll(v *View) {
	h := &e.knob.offers
	e.members = e.members[:0]
	for _, o := range h.items {
		e.members = append(e.members, o.account)
	}
	h.items = h.items[:0]
	for _, a := range e.members {
		if o, ok := e.offer(v, a); ok {
			h.push(o)
		} else {
			e.heap.remove(a)
		}
	}
}

// offer is account a's next task on the node the placement strategy picks,
// scored by affinity; ok is false when it fits nowhere.
func (e *Engine) offer(v *View, a int) (offer, bool) {
	head := e.head(v, a)
	d := head.nodeDemand()
	n, ok := e.bestFor(head, d)
	if !ok {
		return offer{}, false
	}
	return offer{score: affinity(d, e.index.Free(n), e.knob.scale), account: a, node: n}, true
}

// affinity is Σ_k (d_k/M_k)·(idle_k/M_k): the paper's dot product of demand
// and idle vector, each resource normalized by the largest node capacity
// M_k as placement normalizes it (package place), so that bytes do not
// outweigh cores and the affinity placement's node has the best score.
// scale holds 1/M_k².
func affinity(demand, idle, scale ledger.Vector) float64 {
	s := 0.0
	for k, d := range demand {
		s += d * idle[k] * scale[k]
	}
	return s
}

// offer is one account's next task in the efficiency stage.
type offer struct {
	score         float64
	account, node int
}

// before orders offers: higher score first, then the account listed first.
func (o offer) before(p offer) bool {
	if o.score != p.score {
		return o.score > p.score
	}
	return o.account < p.account
}

// offerHeap is a binary heap of offers, best first.
type offerHeap struct{ items []offer }

func (h *offerHeap) push(o offer) {
	h.items = append(h.items, o)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.items[i].before(h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *offerHeap) pop() offer {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		best := i
		if l := 2*i + 1; l < last && h.items[l].before(h.items[best]) {
			best = l
		}
		if r := 2*i + 2; r < last && h.items[r].before(h.items[best]) {
			best = r
		}
		if best == i {
			return top
		}
		h.items[i], h.items[best] = h.items[best], h.items[i]
		i = best
	}
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
	k.scale = resize(k.scale, n)
	clear(k.scale)
	for i := range v.Nodes {
		for r, c := range v.Nodes[i].Capacity {
			k.scale[r] = math.Max(k.scale[r], c)
		}
	}
	for r, m := range k.scale {
		if m > 0 {
			k.scale[r] = 1 / (m * m)
		}
	}
	k.demand = resize(k.demand, len(v.Accounts))
	k.limit = resize(k.limit, len(v.Accounts))
	for a := range v.Accounts {
		k.demand[a] = copyInto(k.demand[a], v.Accounts[a].Running)
		k.left = copyInto(k.left, k.room)
		firstFit(k.demand[a], v.Accounts[a].Queue, k.left, &e.fleet)
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
// Tasks of one job are identical, so a job is counted in one step. Jobs the
// nodes of fl cannot hold are passed over, as the pass passes over them.
func firstFit(total ledger.Vector, queue []Job, left ledger.Vector, fl *fleet) {
	for _, job := range queue {
		if job.Pending <= 0 || !fl.holds(&job) {
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

// DefaultQKnoblerRho is qknobler's ρ until an admin sets it (the QKnobler
// paper's Fig. 8b): the FSM's default and the simulator's.
const DefaultQKnoblerRho = 0.5

// qknoblerPolicy is qknobler's row: fairness up to ρ of DRF's share, then
// efficiency (its own pass); at ρ = 1 it is drf and fills by drf's key.
func qknoblerPolicy() policyRow {
	return policyRow{
		name: QKnobler,
		key:  drfKey,
		pass: func(e *Engine, v *View) bool {
			if v.Settings.QKnoblerRho >= 1 {
				return false
			}
			e.qknoblerPass(v)
			return true
		},
		rule:    "at ρ = 1 qknobler is drf: the account whose current dominant share for its weight is smallest goes first",
		inexact: func(s *Settings) bool { return s.QKnoblerRho < 1 },
		settings: func(s *Settings, _ []string, _ bool) error {
			return core.CheckRho("qknobler knob ρ", s.QKnoblerRho)
		},
	}
}
