package sched

import (
	"fmt"
	"math"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/place"
)

// Engine runs scheduling passes. It keeps only scratch memory between passes
// (so a pass allocates next to nothing); it holds no state that affects the
// outcome, and one Engine must not run two passes at once.
type Engine struct {
	index place.Index
	// indexCurrent says the last Update of the index succeeded, so it
	// holds the capacities fleet last saw (prepare).
	indexCurrent bool
	capacity     ledger.Vector
	fair         []fairness
	cursor       []cursor
	share        []ledger.Vector // static partitions, only for Static
	within       ledger.Vector   // scratch for the static partition check
	heap         rankHeap
	caps         []ledger.Vector
	frees        []ledger.Vector
	out          []Placement
	members      []int       // scratch: the heap's accounts (passfill.go)
	withWork     []int       // scratch: the accounts prepare sets up
	normWeights  []float64   // scratch: the accounts' normalized weights
	knob         knobScratch // qknobler (qknobler.go)
	bpf          bpfScratch  // bpf and sp (bpf.go)

	// tree is the account tree of hdrf and dff (tree.go).
	tree tree
	// partition holds the fawkes partitions (fawkes_policy.go).
	partition []ledger.Vector
	// fleet is the capacities of the pass's nodes: a job they could not
	// hold even idle is passed over (nextJob).
	fleet fleet
	// policy is the row of the pass's policy (policy.go).
	policy policyRow

	// Parallel jobs (gang.go): the nodes the last claim took, the free
	// vectors they had before, the nodes of the pass's gang placements.
	claimed, gangNodes []int
	saved, zero        []float64
	// left and settled are claimFree's scratch: a chosen node's vector
	// less the demand, and whether the node was set to it at once.
	left    ledger.Vector
	settled []bool
	// view is the pass's view; resv its reservation, and halted says a
	// pass without backfill has met a job that cannot start (backfill.go).
	view   *View
	resv   reservation
	halted bool

	// trusted says the caller vouches for every view (TrustViews):
	// Schedule skips validateView.
	trusted bool
}

// cursor is where an account's next task is: job index in its queue and the
// number of that job's tasks already placed in this pass.
type cursor struct {
	job, placed int
}

// NewEngine returns an engine ready for passes.
func NewEngine() *Engine { return &Engine{} }

// TrustViews makes every later pass skip checking the view's shape
// (validateView: one entry per resource in every vector, finite
// non-negative quantities, a valid account tree and settings), and returns
// e. It is for a caller that builds each view from state it has validated
// already and keeps valid — the simulator, whose workload and settings are
// checked once when the run begins — and for which the check, run over
// every node and queued job at every pass, is a sixth of a replay's time.
// The placements are those of a checked pass; only a bad view is no longer
// reported. The public API (NewEngine alone) checks every view.
func (e *Engine) TrustViews() *Engine {
	e.trusted = true
	return e
}

// Schedule runs one pass over the view and returns its placements, in the
// order they were made. The returned slice is reused by the next call.
//
// A pass is progressive filling: the policy's first-ranked account whose next
// task fits on some node gets that task placed; its fairness state is updated;
// repeat until no account's next task fits anywhere. An account's jobs are
// served in queue order: a job whose next task does not fit blocks the jobs
// behind it, so a big job is not starved by a stream of small ones. A job
// too big for every up node, even idle, blocks nothing: waiting would not
// let it start, so the pass skips it (nextJob) until a node that can hold
// it is up.
func (e *Engine) Schedule(v *View) ([]Placement, error) {
	if !e.trusted {
		if err := validateView(v); err != nil {
			return nil, err
		}
	}
	e.out, e.gangNodes = e.out[:0], e.gangNodes[:0]
	if len(v.Nodes) == 0 || len(v.Accounts) == 0 {
		return e.out, nil
	}
	if err := e.prepare(v, false); err != nil {
		return nil, err
	}
	if e.policy.prepare != nil {
		e.policy.prepare(e, v) // its caps: the fill below keeps accounts inside them
	}
	if e.policy.pass != nil && e.policy.pass(e, v) {
		return e.out, nil
	}
	quantum := v.Settings.Quantum.Seconds()
	for e.heap.len() > 0 {
		a := e.heap.top()
		acct := &v.Accounts[a]
		cur := &e.cursor[a]
		job := &acct.Queue[cur.job]
		if !e.fit(a, job) {
			e.heap.remove(a)
			continue
		}
		e.record(a, cur.job, job.FirstIndex+cur.placed)
		f := &e.fair[a]
		f.running.Add(job.Demand)
		f.usage.AddScaled(job.Demand, quantum)
		if cur.placed++; cur.placed == job.Pending {
			cur.job, cur.placed = nextJob(acct.Queue, cur.job+1, &e.fleet), 0
			if cur.job == len(acct.Queue) {
				e.heap.remove(a)
				continue
			}
		}
		// Having been served, a starving account is no longer starving;
		// one whose next job is boosted stays first.
		k, boosted := e.boostKey(v, a)
		if !boosted {
			k = e.key(a, f, &v.Settings)
		}
		e.heap.update(a, k)
	}
	return e.out, nil
}

// fit claims the nodes for account a's next task of job (gang.go),
// honouring the static partition under the static policy.
func (e *Engine) fit(a int, job *Job) bool {
	if e.share != nil {
		e.within = copyInto(e.within, e.fair[a].running)
		e.within.Add(job.Demand)
		if !e.share[a].Fits(e.within) {
			return false
		}
	}
	return e.claim(a, job)
}

// prepare sets up the pass: the node index, each account's fairness state
// projected to the end of the quantum, and the ranked candidates. With
// all, every account's fairness state is set, even an account with
// nothing to place (explain ranks by it); a pass may skip those.
func (e *Engine) prepare(v *View, all bool) error {
	n := len(v.Resources)
	e.caps, e.frees = resize(e.caps, len(v.Nodes)), resize(e.frees, len(v.Nodes))
	for i := range v.Nodes {
		// Stored only when they are other vectors than the last pass's:
		// a store of a pointer costs a write barrier while the collector
		// runs, and the caller's vectors are mostly the same from pass to
		// pass.
		if nd := &v.Nodes[i]; !sameMemory(e.caps[i], nd.Capacity) || !sameMemory(e.frees[i], nd.Free) {
			e.caps[i], e.frees[i] = nd.Capacity, nd.Free
		}
	}
	sameCaps := e.fleet.reset(e.caps)
	if !sameCaps || len(e.capacity) != n || len(v.Nodes) == 0 {
		// The sum of the capacities, unless they are those of the last
		// pass bit for bit: then it is the last pass's sum.
		e.capacity = resize(e.capacity, n)
		clear(e.capacity)
		for i := range v.Nodes {
			e.capacity.Add(v.Nodes[i].Capacity)
		}
	}
	// The index need not compare the capacities again when they are the
	// last pass's and that pass's Update succeeded (it holds them then).
	update := e.index.Update
	if sameCaps && e.indexCurrent {
		update = e.index.UpdateFree
	}
	e.indexCurrent = false
	if err := update(v.Settings.Placement, e.caps, e.frees); err != nil {
		return fmt.Errorf("building the node index: %w", err)
	}
	e.indexCurrent = true
	e.view = v
	e.resetBackfill()
	if e.policy.name == "" || e.policy.name != v.Settings.Policy {
		// The row is the same for every pass of one policy: looked up
		// once, not rebuilt with the whole table each pass.
		row, ok := lookupPolicy(v.Settings.Policy)
		if !ok { // validateView refuses it first
			return fmt.Errorf("unknown policy %q", v.Settings.Policy)
		}
		e.policy = row
	}
	// A pass with the policy's key alone (no pass or prepare of its own)
	// reads an account's fairness state only while the account has a job
	// to place: the others' is left stale, not copied, and their weights
	// are not normalized. Explain reads every account's.
	lean := !all && e.policy.pass == nil && e.policy.prepare == nil
	quantum := v.Settings.Quantum.Seconds()
	e.fair = resize(e.fair, len(v.Accounts))
	e.cursor = resize(e.cursor, len(v.Accounts))
	e.share = nil // the policy's prepare sets partitions (static, fawkes)
	e.heap.reset(len(v.Accounts))
	// The accounts to set up: in a lean pass those with a queue, found in
	// the loop that sums the weights (totalWeight's sum, in its order).
	e.withWork = e.withWork[:0]
	total := 0.0
	for a := range v.Accounts {
		acct := &v.Accounts[a]
		total += acct.Weight
		if lean && len(acct.Queue) == 0 {
			e.cursor[a] = cursor{}
			continue
		}
		e.withWork = append(e.withWork, a)
	}
	if !lean {
		e.normWeights = normalizedWeights(e.normWeights, v.Accounts)
	}
	for _, a := range e.withWork {
		acct := &v.Accounts[a]
		f := &e.fair[a]
		first := nextJob(acct.Queue, 0, &e.fleet)
		if lean {
			if first == len(acct.Queue) {
				e.cursor[a] = cursor{job: first}
				continue
			}
			f.weight = normalizedWeight(acct.Weight, total, len(v.Accounts))
		} else {
			f.weight = e.normWeights[a]
		}
		f.running = copyInto(f.running, acct.Running)
		f.usage = copyInto(f.usage, acct.Usage)
		f.usage.AddScaled(acct.Running, quantum)
		f.baseline = copyInto(f.baseline, acct.Baseline)
		f.baseline.AddScaled(acct.BaselineRate, quantum)
		e.cursor[a] = cursor{job: first}
		if first == len(acct.Queue) {
			continue
		}
		e.heap.push(a, e.startKey(v, a))
	}
	return nil
}

// startKey is account a's rank key as a pass begins (prepare has set its
// fairness state): the boosted class when its next job has an admin's
// boost, highest first; past the starvation time-out the starving
// class, longest waiting first; otherwise the policy's key. Explain
// ranks with it too.
func (e *Engine) startKey(v *View, a int) rankKey {
	if k, ok := e.boostKey(v, a); ok {
		return k
	}
	if acct := &v.Accounts[a]; starving(v, acct) {
		return rankKey{class: classStarving, a: float64(acct.WaitingSince), account: a}
	}
	return e.key(a, &e.fair[a], &v.Settings)
}

// boostKey is account a's key in the boosted class when the job at its
// cursor has an admin's boost.
func (e *Engine) boostKey(v *View, a int) (rankKey, bool) {
	q := v.Accounts[a].Queue
	if c := e.cursor[a].job; c < len(q) && q[c].Boost > 0 {
		return rankKey{class: classBoosted, a: -float64(q[c].Boost), account: a}, true
	}
	return rankKey{}, false
}

// key is account a's rank under the pass's policy, by its fairness state
// f. The account index is part of the key, so that a full tie goes to the
// account listed first. A policy whose own pass ranks (no key) ranks
// every account alike until that pass re-keys them.
func (e *Engine) key(a int, f *fairness, s *Settings) rankKey {
	k := rankKey{class: classNormal}
	if e.policy.key != nil {
		k = e.policy.key(f, e.capacity, s)
	}
	k.account = a
	return k
}

// starving reports whether the account has waited past the time-out.
func starving(v *View, acct *Account) bool {
	t := v.Settings.Timeout
	return t > 0 && v.Now.Sub(acct.WaitingSince) > t
}

// nextJob returns the index of the first job at or after i with pending
// tasks that the nodes of fl could hold, or len(queue). A job
// they cannot hold is passed over rather than left to block the account:
// the jobs behind it run, and it is reached again on every pass, so it
// starts once nodes big enough, and enough of them, are up. A job that
// fits the nodes but not what is free now is not passed over; it keeps
// its place in the queue.
func nextJob(queue []Job, i int, fl *fleet) int {
	for i < len(queue) && (queue[i].Pending <= 0 || !fl.holds(&queue[i])) {
		i++
	}
	return i
}

// normalizedWeights returns w_i/Σw for each account. Accounts with no weight
// still get a tiny one, so that they are ranked among themselves (after
// everyone who contributes) instead of dividing by zero; when nobody has a
// weight, everyone counts as equal.
// They are written into w's memory when it has room.
func normalizedWeights(w []float64, accts []Account) []float64 {
	total := totalWeight(accts)
	w = resize(w, len(accts))
	for i := range accts {
		w[i] = normalizedWeight(accts[i].Weight, total, len(accts))
	}
	return w
}

// normalizedWeight is one account's normalized weight (normalizedWeights):
// w among n accounts whose weights sum to total.
func normalizedWeight(w, total float64, n int) float64 {
	switch {
	case total <= 0:
		return 1 / float64(n)
	case w <= 0:
		return zeroWeight
	}
	return w / total
}

// totalWeight is Σw over the accounts.
func totalWeight(accts []Account) float64 {
	total := 0.0
	for i := range accts {
		total += accts[i].Weight
	}
	return total
}

// zeroWeight stands in for the normalized weight of an account that
// contributes nothing.
const zeroWeight = 1e-9

// sameMemory reports whether a and b are the same vector in memory.
func sameMemory(a, b ledger.Vector) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func copyInto(dst, src ledger.Vector) ledger.Vector {
	dst = resize(dst, len(src))
	copy(dst, src)
	return dst
}

// validateView checks the view's shape: every vector has one entry per
// resource and quantities are finite and non-negative. The view comes from
// the FSM or a trace, so a bad one is an error to report, not a panic.
func validateView(v *View) error {
	if err := v.Settings.Validate(v.Resources); err != nil {
		return fmt.Errorf("policy settings: %w", err)
	}
	if err := validateTree(v); err != nil {
		return fmt.Errorf("account tree: %w", err)
	}
	if err := validateShares(v); err != nil {
		return err
	}
	n := len(v.Resources)
	for i := range v.Nodes {
		nd := &v.Nodes[i]
		if err := validVector(nd.Capacity, n); err != nil {
			return fmt.Errorf("node %q capacity: %w", nd.ID, err)
		}
		if err := validVector(nd.Free, n); err != nil {
			return fmt.Errorf("node %q free resources: %w", nd.ID, err)
		}
		for _, r := range nd.Releases {
			if err := validVector(r.Free, n); err != nil {
				return fmt.Errorf("node %q release at %v: %w", nd.ID, r.At, err)
			}
		}
	}
	for i := range v.Accounts {
		a := &v.Accounts[i]
		for f, vec := range [...]ledger.Vector{a.Running, a.Usage, a.Baseline, a.BaselineRate} {
			if err := validVector(vec, n); err != nil {
				return fmt.Errorf("account %q %s: %w", a.Name, [...]string{"running", "usage", "baseline", "baseline rate"}[f], err)
			}
		}
		if a.Weight < 0 {
			return fmt.Errorf("account %q has negative weight %v", a.Name, a.Weight)
		}
		for j := range a.Queue {
			job := &a.Queue[j]
			if err := validVector(job.Demand, n); err != nil {
				return fmt.Errorf("account %q job %d demand: %w", a.Name, job.ID, err)
			}
			if job.Nodes < 0 {
				return fmt.Errorf("account %q job %d spans %d nodes: want 1 or more (0 means 1)", a.Name, job.ID, job.Nodes)
			}
			if job.Boost < 0 {
				return fmt.Errorf("account %q job %d has boost %d: want 0 (none) or more", a.Name, job.ID, job.Boost)
			}
			if job.Nodes > 1 {
				if err := validVector(job.PerNode, n); err != nil {
					return fmt.Errorf("account %q job %d demand per node: %w", a.Name, job.ID, err)
				}
			}
		}
		if a.Latency != nil {
			if err := a.Latency.validate(n); err != nil {
				return fmt.Errorf("account %q: %w", a.Name, err)
			}
		}
	}
	return nil
}

// validVector is v.Validate(n), quicker for the valid vectors a pass
// checks by the thousand: one comparison per entry (NaN fails x >= 0,
// infinity x <= MaxFloat64), the full check only for its error.
func validVector(v ledger.Vector, n int) error {
	if len(v) == n {
		ok := true
		for _, x := range v {
			ok = ok && x >= 0 && x <= math.MaxFloat64
		}
		if ok {
			return nil
		}
	}
	return v.Validate(n)
}
