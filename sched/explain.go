package sched

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/longfair/longfair/ledger"
)

// Explanation is the engine's own account of why a job's pending tasks
// wait: where its account ranks as the next pass begins, by the key the
// pass ranks with, and what the job waits for on the view's nodes.
type Explanation struct {
	// Account is the job's account; Policy the policy in force.
	Account string
	Policy  Policy
	// Rank is the account's place (1 = first) among the accounts the pass
	// would serve: those with a pending task some node of the view can
	// hold, or, when the view has no node, those with any pending task.
	// Ranked is how many there are; Rank is 0 when the account is not
	// among them. First is the account ranked first.
	Rank, Ranked int
	First        string
	// Key is the account's rank key; KeyExact is false for the policies
	// whose pass orders by more than a key per account (hdrf and dff walk
	// the account tree, bpf and sp serve queue classes, qknobler below
	// ρ = 1 weighs efficiency): Rank then orders by β, lowest first.
	Key      RankKey
	KeyExact bool
	// Rule says in words how the policy orders accounts.
	Rule string
	// Beta is the account's sharing degree at the view's time, as the
	// fairness report shows it (+Inf when it has no baseline to fall short
	// of); hmrf's Key holds the one the pass judges with, at the end of
	// the quantum.
	Beta float64
	// Weight is the account's weight, TotalWeight the sum over accounts.
	Weight, TotalWeight float64
	// Waiting is how long the account has waited for an allocation with
	// pending work; Starving says it is past the time-out (Timeout, zero
	// when off) and goes before every account that is not.
	Waiting  time.Duration
	Timeout  time.Duration
	Starving bool
	// Wait is what the job's next task waits for on the nodes.
	Wait Wait
	// Lacking and Largest say, when no node can hold a task (WaitNoNodeHolds),
	// what of the demand is too large and what the largest node shapes are
	// (Shapes of them).
	Lacking, Largest string
	Shapes           int
	// Holding counts the nodes that could hold a task when idle. Closest,
	// when none has room now (WaitNoRoom), is the one with the most of
	// the demand free, and ClosestFree what it has free. Room names the
	// nodes with room for a task now, in id order (WaitRoom).
	Holding     int
	Closest     string
	ClosestFree ledger.Vector
	Room        []string
	// Ahead counts the pending tasks before the job's in its account's
	// queue that some node can hold: the pass serves them first. Jobs no
	// node can hold are passed over, so they are not counted.
	Ahead int64
	// Nodes is how many nodes the job's tasks span (1 unless parallel):
	// Room must name that many for a task to start.
	Nodes int
	// Forecast, when HasForecast, is the earliest time a task of the job
	// could start as running tasks end at their walltimes, were no other
	// job to go first: the time enough nodes have its demand free. Without
	// it the running tasks' ends do not free enough (tasks without a
	// walltime, or nodes that are down or too small). Reserved says the
	// next pass reserves nodes for the job at Forecast (backfill.go): it is
	// the first ranked job that cannot start, and later work may start
	// only where it cannot delay it.
	Forecast    ledger.Time
	HasForecast bool
	Reserved    bool
}

// Wait is what a job's next task waits for on the nodes.
type Wait int

const (
	// WaitNoNodes: the view has no node at all.
	WaitNoNodes Wait = iota + 1
	// WaitNoNodeHolds: no node could hold a task even idle; the job is
	// passed over until one is up.
	WaitNoNodeHolds
	// WaitNoRoom: some node could hold a task but none has it free now.
	WaitNoRoom
	// WaitRoom: some node has room now; the task starts at the next pass
	// unless accounts ranked before take the room first.
	WaitRoom
)

// RankKey is an account's rank key: Class first, then A, B and C, smaller
// first. Class is "boosted", "starving", "sharing loss" or "normal"; the values
// are the policy's (for hmrf: β, then the aggregate and the dominant
// accumulated share for the weight; starving: the time it has waited
// since, in ledger time).
type RankKey struct {
	Class   string
	A, B, C float64
}

func (k rankKey) public() RankKey {
	class := "normal"
	switch k.class {
	case classBoosted:
		class = "boosted"
	case classStarving:
		class = "starving"
	case classSharingLoss:
		class = "sharing loss"
	}
	return RankKey{Class: class, A: k.a, B: k.b, C: k.c}
}

// Explain says why job id's pending tasks in v wait: it ranks the accounts
// exactly as a pass over v would begin (prepare and startKey) and looks at
// v's nodes as the pass does. It returns an error when the view is not
// valid or holds no pending task of the job.
func (e *Engine) Explain(v *View, id uint64) (*Explanation, error) {
	if err := validateView(v); err != nil {
		return nil, err
	}
	acct, first := -1, -1
	for a := range v.Accounts {
		if i := slices.IndexFunc(v.Accounts[a].Queue, func(j Job) bool { return j.ID == id && j.Pending > 0 }); i >= 0 {
			acct, first = a, i
			break
		}
	}
	if acct < 0 {
		return nil, fmt.Errorf("job %d has no pending task to explain", id)
	}
	if err := e.prepare(v, true); err != nil {
		return nil, err
	}
	a := &v.Accounts[acct]
	x := &Explanation{Account: a.Name, Policy: v.Settings.Policy, Weight: a.Weight, Timeout: v.Settings.Timeout,
		Starving: starving(v, a), Beta: ledger.Beta(a.Usage, a.Baseline)}
	for i := range v.Accounts {
		x.TotalWeight += v.Accounts[i].Weight
	}
	x.Waiting = max(v.Now.Sub(a.WaitingSince), 0)
	x.rank(e, v, acct)
	job := &a.Queue[first]
	x.Nodes = max(job.Nodes, 1)
	x.nodes(e, v, job)
	x.Forecast, x.HasForecast = e.earliest(job)
	for _, j := range a.Queue[:first] {
		if e.fleet.holds(&j) {
			x.Ahead += int64(max(j.Pending, 0))
		}
	}
	// Whether the pass reserves for it: run the pass (the view is only
	// read) and look at its reservation.
	if v.Settings.reservationLimit() > 0 {
		if _, err := e.Schedule(v); err == nil {
			for _, r := range e.LastReservations(nil) {
				if v.Accounts[r.Account].Queue[r.Job].ID == id {
					x.Reserved, x.Forecast, x.HasForecast = true, r.At, true
				}
			}
		}
	}
	return x, nil
}

// rank places account acct among the accounts the pass would serve.
func (x *Explanation) rank(e *Engine, v *View, acct int) {
	x.KeyExact = e.policy.inexact == nil || !e.policy.inexact(&v.Settings)
	x.Rule = e.policy.rankRule(x.KeyExact)
	type ranked struct {
		account int
		key     rankKey
	}
	var keys []ranked
	for a := range v.Accounts {
		q := v.Accounts[a].Queue
		if e.cursor[a].job == len(q) &&
			// With no node nothing is holdable: rank every account with work.
			(len(v.Nodes) > 0 || !slices.ContainsFunc(q, func(j Job) bool { return j.Pending > 0 })) {
			continue
		}
		k := e.startKey(v, a)
		if !x.KeyExact && k.class != classStarving && k.class != classBoosted {
			k = rankKey{class: classNormal, a: ledger.Beta(e.fair[a].usage, e.fair[a].baseline), account: a}
		}
		keys = append(keys, ranked{a, k})
	}
	slices.SortFunc(keys, func(p, q ranked) int {
		switch {
		case p.key.less(q.key):
			return -1
		case q.key.less(p.key):
			return 1
		}
		return 0
	})
	x.Ranked = len(keys)
	for i, k := range keys {
		if k.account == acct {
			x.Rank, x.Key = i+1, k.key.public()
		}
	}
	if len(keys) > 0 {
		x.First = v.Accounts[keys[0].account].Name
	}
}

// nodes says what a task of job waits for on the view's nodes.
func (x *Explanation) nodes(e *Engine, v *View, job *Job) {
	demand := job.nodeDemand()
	switch {
	case len(v.Nodes) == 0:
		x.Wait = WaitNoNodes
		return
	case !e.fleet.holds(job):
		x.Wait = WaitNoNodeHolds
		x.Lacking, x.Largest, x.Shapes = e.fleet.shapes.Lacking(v.Resources, demand), e.fleet.shapes.Describe(v.Resources), len(e.fleet.shapes)
		switch {
		case job.Exclusive:
			x.Lacking = fmt.Sprintf("%d whole nodes of exactly %s", max(job.Nodes, 1), ledger.FormatVector(v.Resources, demand))
		case e.fleet.shapes.Holds(demand): // a parallel job: too few such nodes
			x.Lacking = fmt.Sprintf("%s on each of %d nodes", ledger.FormatVector(v.Resources, demand), job.Nodes)
		}
		return
	}
	best := -1.0
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if !n.Capacity.Fits(demand) || job.Exclusive && !sameVector(n.Capacity, demand) {
			continue
		}
		x.Holding++
		if n.Free.Fits(demand) {
			x.Room = append(x.Room, n.ID)
		}
		// The closest node has the largest fraction of the demand free in
		// its scarcest resource.
		score := math.Inf(1)
		for j, d := range demand {
			if d > 0 {
				score = math.Min(score, n.Free[j]/d)
			}
		}
		if score > best {
			best, x.Closest, x.ClosestFree = score, n.ID, n.Free.Clone()
		}
	}
	sort.Strings(x.Room)
	x.Wait = WaitNoRoom
	if len(x.Room) >= max(job.Nodes, 1) {
		x.Wait, x.Closest, x.ClosestFree = WaitRoom, "", nil
	}
}

// rankRule says in words how the policy orders accounts; exact is false
// when Explain ranks by β instead of the policy's own order.
func (r policyRow) rankRule(exact bool) string {
	if !exact {
		return fmt.Sprintf("%s orders accounts by more than one key per account (its account tree, its queue classes or its tasks' efficiency); this rank orders them by β, lowest first", r.name)
	}
	if r.rule == "" {
		return fmt.Sprintf("%s ranks accounts by its own key", r.name)
	}
	return r.rule
}
