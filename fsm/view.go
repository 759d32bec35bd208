package fsm

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// View returns what the leader's scheduler needs for one pass at time now:
// every account in name order with its weight, allocation, fairness state
// and pending queue, and the up nodes in id order with their free
// resources. The view is a copy the caller owns.
//
// Each queue entry is a run of pending tasks of one job: a job's tasks that
// were lost and wait for another attempt come first, one entry each, then
// the job's never-placed tasks as one entry. Every entry carries the job id
// and the task index it starts at, so a placement maps back to a task with
// AssignFor.
func (f *FSM) View(now ledger.Time) *sched.View { return f.ViewAfter(now, nil) }

// ViewAfter is View as it will be once the task events ends have applied:
// the attempts they end give back what they hold on their nodes, and their
// accounts no longer hold it. The leader schedules on it while the events
// are on their way through the log, so that a slot freed by a task's end
// is filled by the entry after the end's (or the same one) rather than a
// second commit later. Nothing else of the events is foreseen (a freed
// throttle or dependency waits for their commit), which only makes the
// view hold back; and Assign checks every placement against the state it
// applies to, so a view that foresaw wrongly (the events were refused, or
// the Assign overtook them) costs a dropped placement, never a node held
// twice. A queued attempt's start or end also gives back its room in its
// node's look-ahead queue (Node.QueueFree), for the look-ahead pass to
// refill while it is on its way; other starts, and events naming no
// active attempt, change nothing.
func (f *FSM) ViewAfter(now ledger.Time, ends []TaskEvent) *sched.View {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.st
	now = max(now, st.now)
	back := st.givenBack(ends)
	n := len(st.settings.Resources)
	v := &sched.View{
		Now:       now,
		Resources: slices.Clone(st.settings.Resources),
		Settings:  schedSettings(&st.settings, st.window),
		Accounts:  make([]sched.Account, 0, len(st.accountNames)),
		Groups:    st.viewGroups(),
	}
	limits := newBudget(st)
	for _, name := range st.accountNames {
		fa := st.fair.Account(name, now)
		a := sched.Account{
			Name:         name,
			Weight:       st.weights[name],
			Running:      ledger.NewVector(n),
			Usage:        pad(fa.Usage, n),
			Baseline:     pad(fa.Baseline, n),
			BaselineRate: pad(fa.BaselineRate, n),
			Group:        st.accounts[name].Group,
			Share:        st.shares.shares[name],
			Latency:      st.viewLatency(name, now),
		}
		oldestPending := ledger.Time(-1)
		for _, id := range st.accountJobs[name] {
			j := st.jobs[id]
			// A queued task is not counted until it starts (lookahead.go).
			a.Running.AddScaled(j.allocation(), float64(j.Running-j.Queued))
			if j.pending() == 0 {
				continue
			}
			if why, _ := st.heldBack(j, now); why != "" {
				continue
			}
			if oldestPending < 0 {
				oldestPending = j.SubmittedAt
			}
			before := len(a.Queue)
			room, _ := limits.room(j)
			a.Queue = j.viewEntries(a.Queue, room)
			offered := 0
			for _, e := range a.Queue[before:] {
				offered += e.Pending
			}
			limits.take(j, int64(offered))
		}
		if g, ok := back.accounts[name]; ok {
			a.Running.Sub(g)
		}
		sortByNice(a.Queue, st.jobs)
		a.WaitingSince = waitingSince(fa, oldestPending)
		v.Accounts = append(v.Accounts, a)
	}
	for _, id := range sortedKeys(st.nodes) {
		nd := st.nodes[id]
		if !nd.rec.Up {
			continue
		}
		v.Nodes = append(v.Nodes, sched.Node{ID: id, Capacity: nd.rec.Capacity.Clone(),
			Free: after(room(nd), back.nodes[id], nd.rec.Capacity), Releases: st.releases(nd, back.ending),
			QueueFree: after(queueRoom(nd), back.queues[id], nd.rec.Capacity)})
	}
	return v
}

// after is room once back is given back to it, within capacity and never
// below zero: what the engine is offered.
func after(room, back, capacity ledger.Vector) ledger.Vector {
	out := room.Clone()
	for k, x := range back {
		if k < len(out) && k < len(capacity) {
			out[k] = min(out[k]+x, capacity[k])
		}
	}
	for k := range out {
		out[k] = max(out[k], 0)
	}
	return out
}

// givenBack is what the ends among events give back, per node and per
// account, and which tasks they end; queues is the look-ahead queue room
// the ends and starts of queued attempts give back, per node.
type givenBack struct {
	nodes, accounts, queues   map[string]ledger.Vector
	ending, starting, leaving map[taskID]bool
}

func (st *state) givenBack(events []TaskEvent) givenBack {
	if len(events) == 0 {
		return givenBack{}
	}
	n := len(st.settings.Resources)
	g := givenBack{nodes: map[string]ledger.Vector{}, accounts: map[string]ledger.Vector{}, queues: map[string]ledger.Vector{},
		ending: map[taskID]bool{}, starting: map[taskID]bool{}, leaving: map[taskID]bool{}}
	add := func(m map[string]ledger.Vector, key string, v ledger.Vector) {
		if m[key] == nil {
			m[key] = ledger.NewVector(n)
		}
		m[key].Add(pad(v, n))
	}
	for _, e := range events {
		id := taskID{e.JobID, e.Task}
		a, ok := st.running[id]
		if !ok || a.Attempt != e.Attempt || g.ending[id] {
			continue
		}
		if a.State == TaskQueued && !g.leaving[id] {
			// Started or ended, it leaves its node's queue.
			g.leaving[id] = true
			add(g.queues, a.Node, a.nodeDemand())
		}
		if e.Kind == TaskStarted {
			if a.State == TaskQueued && !g.starting[id] {
				// Its account holds it once it has started.
				g.starting[id] = true
				held := a.Demand.Clone()
				held.Scale(-1)
				add(g.accounts, a.Account, held)
			}
			continue
		}
		g.ending[id] = true
		if a.State != TaskQueued || g.starting[id] {
			add(g.accounts, a.Account, a.Demand)
		}
		for _, node := range a.allNodes() {
			add(g.nodes, node, a.nodeDemand())
		}
	}
	return g
}

// waitingSince is the starvation clock: the last allocation, or the arrival
// of the oldest pending job if that is later.
func waitingSince(fa ledger.AccountFairness, oldestPending ledger.Time) ledger.Time {
	since := oldestPending
	if fa.Allocated && fa.LastAllocation > since {
		since = fa.LastAllocation
	}
	return max(since, 0)
}

// AssignFor turns the placements of a pass over v into the Assign command
// that proposes them.
func AssignFor(v *sched.View, placements []sched.Placement) (*Assign, error) {
	cmd := &Assign{Placements: make([]TaskPlacement, 0, len(placements))}
	for i, p := range placements {
		if p.Account < 0 || p.Account >= len(v.Accounts) || p.Node < 0 || p.Node >= len(v.Nodes) ||
			p.Job < 0 || p.Job >= len(v.Accounts[p.Account].Queue) {
			return nil, fmt.Errorf("fsm: placement %d (%+v) does not index the view", i, p)
		}
		job := v.Accounts[p.Account].Queue[p.Job]
		tp := TaskPlacement{JobID: job.ID, Task: int64(p.Task), Node: v.Nodes[p.Node].ID, Queued: p.Queued}
		for _, n := range p.Nodes {
			if n < 0 || n >= len(v.Nodes) {
				return nil, fmt.Errorf("fsm: placement %d (%+v) names node %d outside the view", i, p, n)
			}
			tp.Nodes = append(tp.Nodes, v.Nodes[n].ID)
		}
		cmd.Placements = append(cmd.Placements, tp)
	}
	return cmd, nil
}

// FairnessReport is the fairness report at a time: one row per account.
type FairnessReport struct {
	At        ledger.Time
	Policy    sched.Policy
	Window    ledger.Window
	Resources []string
	// Capacity of the up nodes.
	Capacity map[string]float64
	Accounts []FairnessRow
}

// FairnessRow is one account's line of the fairness report.
type FairnessRow struct {
	Account string
	Weight  float64
	// Share is the non-sharing partition S_i = R·w_i/Σw.
	Share map[string]float64
	// Usage is Ü_i and Baseline the integral of the non-sharing baseline,
	// both in resource-seconds under the window.
	Usage    map[string]float64
	Baseline map[string]float64
	// Beta is the sharing degree β_i; HasBeta is false when the account has
	// no baseline at all (no sharing loss to make up; Beta is then +Inf).
	Beta    float64
	HasBeta bool
	// Allocation is U_i, what the account's running tasks hold.
	Allocation map[string]float64
	Pending    int64
	Running    int64
	// Available is the account's SU available for new jobs.
	Available ledger.SU
	// Waiting is how long the account has waited for an allocation while it
	// had pending tasks (0 when nothing is pending).
	Waiting time.Duration
	// Group is the account's parent in the account tree ("" for the
	// root); FawkesShare its FAWKES partition, a fraction of the cluster
	// (0 when it has none).
	Group       string
	FawkesShare float64
}

// Fairness returns the fairness report at time at; account, if not empty,
// reports only that account.
func (f *FSM) Fairness(account string, at ledger.Time) (FairnessReport, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := f.st
	at = max(at, st.now)
	names := st.accountNames
	if account != "" {
		if _, ok := st.accounts[account]; !ok {
			return FairnessReport{}, notFound("account %q does not exist: check the name", account)
		}
		names = []string{account}
	}
	r := FairnessReport{
		At: at, Policy: st.settings.Policy, Window: st.window,
		Resources: slices.Clone(st.settings.Resources), Capacity: st.named(st.capacity),
	}
	for _, name := range names {
		r.Accounts = append(r.Accounts, st.fairnessRow(name, at))
	}
	return r, nil
}

// fairnessRow is one account's line of the fairness report at time at
// (the report's, and each sample of the fairness history's).
func (st *state) fairnessRow(name string, at ledger.Time) FairnessRow {
	n := len(st.settings.Resources)
	fa := st.fair.Account(name, at)
	usage, baseline := pad(fa.Usage, n), pad(fa.Baseline, n)
	beta := ledger.Beta(usage, baseline)
	row := FairnessRow{
		Account: name, Weight: st.weights[name], Share: st.named(st.share(name)),
		Usage: st.named(usage), Baseline: st.named(baseline), Beta: beta, HasBeta: !isInf(beta),
		Available: st.su.Balance(name, at).Available,
		Group:     st.accounts[name].Group, FawkesShare: st.shares.shares[name],
	}
	tot := st.jobTotals.get(name, func() jobTotals { return st.sumJobs(name) })
	row.Running, row.Pending = tot.running, tot.pending
	row.Allocation = st.named(pad(tot.alloc, n))
	if row.Pending > 0 {
		row.Waiting = max(at.Sub(waitingSince(fa, tot.oldestPending)), 0)
	}
	return row
}

// jobTotals are an account's sums over its active jobs.
type jobTotals struct {
	running, pending int64
	alloc            ledger.Vector
	oldestPending    ledger.Time
}

// sumJobs walks account's active jobs.
func (st *state) sumJobs(account string) jobTotals {
	t := jobTotals{alloc: ledger.NewVector(len(st.settings.Resources)), oldestPending: -1}
	for _, id := range st.accountJobs[account] {
		j := st.jobs[id]
		waiting := j.waiting()
		t.alloc.AddScaled(j.Demand, float64(j.Running-waiting))
		t.running += j.Running - waiting
		if p := j.pending() + waiting; p > 0 {
			t.pending += p
			if t.oldestPending < 0 {
				t.oldestPending = j.SubmittedAt
			}
		}
	}
	return t
}

// jobTotalsCache holds jobTotals per account. Reads fill it under the
// FSM's read lock, many at once, hence its own lock; applies empty
// entries under the write lock.
type jobTotalsCache struct {
	mu sync.Mutex
	m  map[string]jobTotals
}

func (c *jobTotalsCache) get(account string, sum func() jobTotals) jobTotals {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[account]
	if !ok {
		t = sum()
		c.m[account] = t
	}
	return t
}

func (c *jobTotalsCache) drop(accounts []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range accounts {
		delete(c.m, a)
	}
}

func isInf(x float64) bool { return x > 1.7976931348623157e308 }

// releases are what the node's running attempts give back when they end
// at the latest — started (or placed) plus their limit — in task
// order, for backfill's reservation (sched/backfill.go).
func (s *state) releases(nd *nodeState, ending map[taskID]bool) []sched.Release {
	out := make([]sched.Release, 0, len(nd.tasks))
	for _, id := range sortedTaskIDs(nd.tasks) {
		a := s.running[id]
		j := s.jobs[id.job]
		if a == nil || j == nil || ending[id] || a.State == TaskQueued {
			continue
		}
		from := a.AssignedAt
		if a.StartedAt != 0 {
			from = a.StartedAt
		}
		out = append(out, sched.Release{At: from.Add(a.limit(j)), Free: a.nodeDemand().Clone()})
	}
	return out
}
