package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// mayPlace reports whether a pass now could place anything. A pass ends
// only when no account's next task fits on any node, and until resources
// are freed or a new job reaches the head of an empty queue that stays true:
// arrivals behind a blocked head cannot be placed (queues are served in
// order), and time passing changes the ranking, not what fits. So a pass is
// needed only if some queue head fits on a node freed at this time, or a new
// head fits anywhere. Skipping a pass that places nothing changes nothing,
// and on a saturated cluster it saves most passes.
//
// That reasoning holds for the policies that cap nobody. Under static a
// task ending also frees room in its account's partition, which may let its
// head fit on any node, so every completion calls for a pass; the other
// policies that cap accounts (sched.Policy.CapFree is false) always get
// their pass.
//
// With EASY backfill a pass also ends with heads that fit the free nodes
// but not around the reservation, and without backfill with heads behind
// the first job that cannot start; the next pass may reserve for or stop
// at another job (the ranking moved), so the freed-node argument fails; a
// pass is then skipped only when no queue head fits the free nodes at all.
//
// A parallel head fits when enough nodes hold its per-node demand; an old
// one can fit now only if a freed node holds it.
func (r *replay) mayPlace() bool {
	switch p := r.cfg.Settings.Policy; {
	case r.capFree:
	case p == sched.Static:
		if len(r.freed) > 0 {
			return true
		}
	default:
		return true
	}
	if r.holdsBack {
		return r.anyHeadFits()
	}
	for _, a := range r.newHeads {
		if r.fitsFree(&r.view.Accounts[a].Queue[0]) {
			return true
		}
	}
	if len(r.freed) == 0 {
		return false
	}
	for a := range r.view.Accounts {
		q := r.view.Accounts[a].Queue
		if len(q) == 0 {
			continue
		}
		head := q[0].Demand
		if q[0].Nodes > 1 {
			head = q[0].PerNode
		}
		for _, n := range r.freed {
			if r.view.Nodes[n].Free.Fits(head) {
				if q[0].Nodes <= 1 || r.fitsFree(&q[0]) {
					return true
				}
				break
			}
		}
	}
	return false
}

// anyHeadFits reports whether some account's queue head fits the free
// nodes. What the cluster has free in all (capacity less what runs) rules
// out most heads of a busy cluster without looking at nodes.
func (r *replay) anyHeadFits() bool {
	r.sum = copyInto(r.sum, r.capacity)
	r.sum.Sub(r.running)
	for a := range r.view.Accounts {
		q := r.view.Accounts[a].Queue
		if len(q) > 0 && r.sum.Fits(q[0].Demand) && r.fitsFree(&q[0]) {
			return true
		}
	}
	return false
}

// fitsFree reports whether a task of job fits the nodes' free resources
// now: one node, or job.Nodes distinct ones for a parallel job. The count
// of nodes that hold a per-node demand is kept for the rest of the time
// step (fitCounts), since a log's parallel jobs share a few per-node
// shapes.
func (r *replay) fitsFree(job *sched.Job) bool {
	if job.Nodes <= 1 {
		for n := range r.view.Nodes {
			if r.view.Nodes[n].Free.Fits(job.Demand) {
				return true
			}
		}
		return false
	}
	for _, fc := range r.fitCounts {
		if equalVectors(fc.perNode, job.PerNode) {
			return fc.nodes >= job.Nodes
		}
	}
	count := 0
	for n := range r.view.Nodes {
		if r.view.Nodes[n].Free.Fits(job.PerNode) {
			count++
		}
	}
	r.fitCounts = append(r.fitCounts, fitCount{perNode: job.PerNode, nodes: count})
	return count >= job.Nodes
}

// fitCount is how many nodes hold perNode in their free resources.
type fitCount struct {
	perNode ledger.Vector
	nodes   int
}

func copyInto(dst, src ledger.Vector) ledger.Vector {
	dst = dst[:len(src)]
	copy(dst, src)
	return dst
}

// pass runs one scheduling pass and starts what it placed.
func (r *replay) pass() error {
	t := r.now
	for a := range r.view.Accounts {
		va := &r.view.Accounts[a]
		if len(va.Queue) == 0 {
			continue // the engine ranks only accounts with work; the rest may be stale
		}
		acct := &r.accts[a]
		r.book.AccountInto(va.Name, t, &acct.fair) // writes va.Usage and va.Baseline
		va.WaitingSince = r.jobs[va.Queue[0].ID].arrived
		if acct.allocated && acct.lastAlloc > va.WaitingSince {
			va.WaitingSince = acct.lastAlloc
		}
	}
	placements, err := r.eng.Schedule(&r.view)
	if err != nil {
		return fmt.Errorf("scheduling pass at %v: %w", t, err)
	}
	r.nPasses++
	if len(placements) == 0 {
		return nil
	}
	r.nPlacements += len(placements)
	r.groups = r.groups[:0]
	clear(r.groupIndex)
	r.placedAccts = r.placedAccts[:0]
	for _, p := range placements {
		if err := r.place(p); err != nil {
			return fmt.Errorf("scheduling pass at %v: engine placement %+v: %w", t, p, err)
		}
	}
	for _, g := range r.groups {
		r.startGroup(g)
	}
	// Placed jobs with nothing left pending leave the queue's head; the
	// engine serves each queue in order, so they are a prefix.
	for _, a := range r.placedAccts {
		r.placedMark[a] = false
		va := &r.view.Accounts[a]
		k := 0
		for k < len(va.Queue) && va.Queue[k].Pending <= 0 {
			k++
		}
		va.Queue = va.Queue[k:]
	}
	return nil
}

// place checks one placement against the view and takes its resources. The
// engine is trusted for policy, not for bookkeeping: a placement that is out
// of range, out of order or over a node's capacity is an error, never a
// silently corrupted replay.
func (r *replay) place(p sched.Placement) error {
	if p.Account < 0 || p.Account >= len(r.view.Accounts) {
		return fmt.Errorf("account index out of range")
	}
	va := &r.view.Accounts[p.Account]
	if p.Job < 0 || p.Job >= len(va.Queue) {
		return fmt.Errorf("job index out of range")
	}
	q := &va.Queue[p.Job]
	if q.Pending <= 0 || p.Task != q.FirstIndex {
		return fmt.Errorf("task %d is not the job's next pending task (next %d, %d pending)", p.Task, q.FirstIndex, q.Pending)
	}
	if p.Node < 0 || p.Node >= len(r.view.Nodes) {
		return fmt.Errorf("node index out of range")
	}
	if q.Nodes > 1 {
		if len(p.Nodes) != q.Nodes || p.Nodes[0] != p.Node {
			return fmt.Errorf("a task of a job spanning %d nodes got nodes %v (head %d)", q.Nodes, p.Nodes, p.Node)
		}
		for i, n := range p.Nodes {
			if n < 0 || n >= len(r.view.Nodes) {
				return fmt.Errorf("node index out of range")
			}
			if slices.Contains(p.Nodes[:i], n) {
				return fmt.Errorf("node %q given twice", r.view.Nodes[n].ID)
			}
			if err := r.take(n, q.PerNode); err != nil {
				return err
			}
		}
	} else {
		if len(p.Nodes) > 1 {
			return fmt.Errorf("a one-node task got nodes %v", p.Nodes)
		}
		if err := r.take(p.Node, q.Demand); err != nil {
			return err
		}
	}
	q.FirstIndex++
	q.Pending--
	va.Running.Add(q.Demand)
	r.running.Add(q.Demand)
	if !r.placedMark[p.Account] {
		r.placedMark[p.Account] = true
		r.placedAccts = append(r.placedAccts, p.Account)
	}
	j := int(q.ID)
	if q.Nodes > 1 {
		// A parallel task is its own group: it ends on all its nodes at
		// once. p.Nodes is valid until the next pass; startGroup keeps a
		// copy.
		r.groups = append(r.groups, startGroup{job: j, node: p.Node, count: 1, nodes: p.Nodes})
		return nil
	}
	key := uint64(j)<<32 | uint64(p.Node)
	if g, ok := r.groupIndex[key]; ok {
		r.groups[g].count++
		return nil
	}
	r.groupIndex[key] = len(r.groups)
	r.groups = append(r.groups, startGroup{job: j, node: p.Node, count: 1})
	return nil
}

// take takes demand d from node n's free resources; over capacity is an
// error.
func (r *replay) take(n int, d ledger.Vector) error {
	if n < 0 || n >= len(r.view.Nodes) {
		return fmt.Errorf("node index out of range")
	}
	nd := &r.view.Nodes[n]
	nd.Free.Sub(d)
	for x, free := range nd.Free {
		if free < -overcommitTolerance*max(1, nd.Capacity[x]) {
			return fmt.Errorf("node %q over capacity in %s by %g", nd.ID, r.w.Resources[x], -free)
		}
		nd.Free[x] = max(free, 0)
	}
	return nil
}

// overcommitTolerance is the relative floating-point slack a node may be
// over capacity by (the engine's fit test allows 1e-9 absolute).
const overcommitTolerance = 1e-6

// startGroup starts count tasks of one job on one node.
func (r *replay) startGroup(g startGroup) {
	job := &r.w.Jobs[g.job]
	a := job.Account
	acct := &r.accts[a]
	js := &r.jobs[g.job]
	k := float64(g.count)
	r.scaled = scaledInto(r.scaled, job.Demand, k)
	r.book.TaskStarted(r.w.Accounts[a].Name, r.scaled, r.now)
	ev := event{at: r.now.Add(job.Runtime), started: r.now, job: int32(g.job), node: int32(g.node), count: int32(g.count), kind: evEnd}
	var nodes []int
	if g.nodes != nil {
		ev.gang = r.keepGang(g.nodes)
		nodes = r.gangs[ev.gang-1]
		for _, n := range nodes {
			r.nodeTasks[n]++
			r.noteRelease(n, job, 1)
		}
	} else {
		r.nodeTasks[g.node] += g.count
		r.noteRelease(g.node, job, g.count)
	}
	r.events.push(ev)
	if !js.hasStarted {
		js.firstStart, js.hasStarted = r.now, true
	}
	js.started += g.count
	r.runningTasks += g.count
	acct.runningTasks += g.count
	acct.pending -= g.count
	r.pending -= g.count
	acct.usage.AddScaled(job.Demand, k*job.Runtime.Seconds())
	acct.tasksRun += g.count
	acct.slotStarted += g.count
	acct.lastAlloc, acct.allocated = r.now, true
	if r.cfg.Trace != nil {
		r.cfg.Trace(TraceEvent{Kind: Start, Time: r.now, Job: g.job, Node: g.node, Nodes: slices.Clone(nodes), Tasks: g.count})
	}
}

// keepGang copies a parallel task's nodes into a slot of r.gangs and
// returns the slot's number plus one (an event's gang).
func (r *replay) keepGang(nodes []int) int32 {
	if k := len(r.freeGangs); k > 0 {
		s := r.freeGangs[k-1]
		r.freeGangs = r.freeGangs[:k-1]
		r.gangs[s] = append(r.gangs[s][:0], nodes...)
		return s + 1
	}
	r.gangs = append(r.gangs, slices.Clone(nodes))
	return int32(len(r.gangs))
}

// noteRelease lists, for backfill's reservation, what count tasks of job
// started now on node n give back when their walltime is up: the engine
// plans with the declared walltime, while the replay ends them at their
// runtime, earlier or later.
func (r *replay) noteRelease(n int, job *Job, count int) {
	if !r.backfill {
		return
	}
	free := job.nodeDemand()
	if count != 1 {
		free = free.Clone()
		for x := range free {
			free[x] = job.nodeDemand()[x] * float64(count)
		}
	}
	nd := &r.view.Nodes[n]
	nd.Releases = append(nd.Releases, sched.Release{At: r.now.Add(job.walltime()), Free: free})
}

// updateBaselines gives the book the new non-sharing baseline rate of every
// account whose active tasks changed at this time.
func (r *replay) updateBaselines() {
	for _, a := range r.touched {
		r.touchedMark[a] = false
		rate := r.baselineRate(a)
		acct := &r.accts[a]
		if !equalVectors(rate, acct.rate) {
			copy(acct.rate, rate)
			r.book.SetBaselineRate(r.w.Accounts[a].Name, acct.rate, r.now)
		}
	}
	r.touched = r.touched[:0]
}

// baselineRate is what the account would run alone in its partition: the
// largest prefix of its active tasks that fits. Because the engine serves an
// account's queue in order, its running tasks are always ahead of its
// pending ones in arrival order, so "running first, then pending in queue
// order" is simply its unfinished jobs in arrival order. Only the prefix
// that can matter is handed over: it stops at the first job that overflows
// the partition.
func (r *replay) baselineRate(a int) ledger.Vector {
	acct := &r.accts[a]
	r.compactActive(acct)
	groups := r.active[:0]
	clear(r.sum)
	for _, j := range acct.active {
		js := &r.jobs[j]
		job := &r.w.Jobs[j]
		left := job.Tasks - js.finished
		if left == 0 {
			continue
		}
		groups = append(groups, ledger.TaskGroup{Demand: job.Demand, Count: left})
		r.sum.AddScaled(job.Demand, float64(left))
		if !acct.share.Fits(r.sum) {
			break
		}
	}
	r.active = groups
	r.rate = ledger.NonSharingRateInto(r.rate, r.room, acct.share, groups)
	return r.rate
}

// compactActive drops finished jobs from the account's active list: from
// the front as they finish, and all at once when they make up half of it.
func (r *replay) compactActive(acct *acctState) {
	done := func(j int) bool { return r.jobs[j].finished == r.w.Jobs[j].Tasks }
	for len(acct.active) > 0 && done(acct.active[0]) {
		acct.active = acct.active[1:]
		acct.activeDead--
	}
	if acct.activeDead > 16 && 2*acct.activeDead > len(acct.active) {
		// Compacted to the front of its memory: the window starts there
		// or later, so no job is overwritten before it is read.
		live := acct.activeMem[:0]
		for _, j := range acct.active {
			if !done(j) {
				live = append(live, j)
			}
		}
		acct.active, acct.activeDead = live, 0
	}
}

func equalVectors(a, b ledger.Vector) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// classify marks the jobs that can never run: a task that fits no node, or,
// under the static policy, one larger than the account's partition (static
// never lends, so such a job would block its account's queue forever).
func (r *replay) classify() {
	fitsMemo := map[string]bool{}
	var key []byte
	for j := range r.w.Jobs {
		job := &r.w.Jobs[j]
		// Eight bytes for the node count, then eight per quantity: a
		// key per shape, without formatting a million jobs.
		key = binary.LittleEndian.AppendUint64(key[:0], uint64(max(job.Nodes, 1)))
		for _, x := range job.nodeDemand() {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(x))
		}
		fits, seen := fitsMemo[string(key)]
		if !seen {
			fits = r.w.holds(job)
			fitsMemo[string(key)] = fits
		}
		reason := ""
		switch {
		case !fits && job.Nodes > 1:
			reason = fmt.Sprintf("a task needs %d nodes of %s, more than the cluster has", job.Nodes, r.FormatVector(job.PerNode))
		case !fits:
			reason = fmt.Sprintf("a task needs %s, more than any node has", r.FormatVector(job.Demand))
		case r.cfg.Settings.Policy == sched.Static && !r.accts[job.Account].share.Fits(job.Demand):
			reason = fmt.Sprintf("a task needs %s, more than the account's static partition %s",
				r.FormatVector(job.Demand), r.FormatVector(r.accts[job.Account].share))
		default:
			continue
		}
		r.jobs[j].unschedulable = true
		r.unsched = append(r.unsched, Unschedulable{
			Job: j, ID: job.ID, Account: r.w.Accounts[job.Account].Name, Tasks: job.Tasks, Reason: reason,
		})
	}
}

// FormatVector writes <cpu 4, mem 15> with the workload's resource names.
func (r *replay) FormatVector(v ledger.Vector) string {
	return FormatVector(r.w.Resources, v)
}

func FormatVector(names []string, v ledger.Vector) string {
	b := []byte{'<'}
	for i, x := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%s %.4g", names[i], x)
	}
	return string(append(b, '>'))
}
