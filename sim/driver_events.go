package sim

import (
	"slices"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// arrive submits job j; it reports whether the job joined a queue.
func (r *replay) arrive(j int) bool {
	job := &r.w.Jobs[j]
	js := &r.jobs[j]
	js.arrived, js.hasArrived = r.now, true
	if !r.begun {
		r.begun, r.start = true, r.now
	}
	r.trace(TraceEvent{Kind: Arrive, Time: r.now, Job: j, Tasks: job.Tasks})
	if js.unschedulable {
		return false
	}
	a := job.Account
	if acct := &r.accts[a]; !acct.arrived {
		acct.firstArrival, acct.arrived = r.now, true
	}
	va := &r.view.Accounts[a]
	if len(va.Queue) == 0 {
		r.newHeads = append(r.newHeads, a)
	}
	q := sched.Job{ID: uint64(j), Demand: job.Demand, Pending: job.Tasks, Walltime: job.walltime()}
	if job.Nodes > 1 {
		q.Nodes, q.PerNode = job.Nodes, job.PerNode
	}
	acct := &r.accts[a]
	r.enqueue(acct, va, q)
	acct.active, acct.activeMem = appendToWindow(acct.active, acct.activeMem, j)
	acct.pending += job.Tasks
	r.pending += job.Tasks
	r.touch(a)
	r.noteWork(a) // fawkes_discrimination.go
	return true
}

// enqueue appends q to the account's queue in the view, a window of
// acct.queue that passes move forward as its head jobs start (pass). The
// engine keeps nothing of the view between passes.
func (r *replay) enqueue(acct *acctState, va *sched.Account, q sched.Job) {
	va.Queue, acct.queue = appendToWindow(va.Queue, acct.queue, q)
}

// appendToWindow appends x to window, a window of mem whose front is
// dropped as it is used up, and returns both. Appending at the window's
// end alone would reallocate and copy the window whenever it reached the
// end of mem; it moves back to the front of mem instead when mem is at
// most half full.
func appendToWindow[T any](window, mem []T, x T) ([]T, []T) {
	full := len(window) == cap(window)
	if full && 2*len(window) < cap(mem) {
		window = mem[:copy(mem, window)]
		full = false
	}
	window = append(window, x)
	if full { // new memory
		mem = window[:cap(window)]
	}
	return window, mem
}

// complete applies a group of tasks ending.
func (r *replay) complete(e event) {
	j, node, count := int(e.job), int(e.node), int(e.count)
	job := &r.w.Jobs[j]
	a := job.Account
	acct := &r.accts[a]
	va := &r.view.Accounts[a]
	k := float64(count)

	var nodes []int
	if e.gang > 0 {
		nodes = r.gangs[e.gang-1]
		for _, n := range nodes {
			r.freeOn(n, job, 1, e.started)
		}
	} else {
		r.freeOn(node, job, count, e.started)
	}
	acct.runningTasks -= count
	release(va.Running, job.Demand, k, acct.runningTasks)
	r.runningTasks -= count
	release(r.running, job.Demand, k, r.runningTasks)

	r.scaled = scaledInto(r.scaled, job.Demand, k)
	r.book.TaskEnded(r.w.Accounts[a].Name, r.scaled, e.started, r.now)
	js := &r.jobs[j]
	js.finished += count
	if r.cfg.Trace != nil {
		r.cfg.Trace(TraceEvent{Kind: End, Time: r.now, Job: j, Node: node, Nodes: slices.Clone(nodes), Tasks: count})
	}
	if e.gang > 0 {
		r.gangs[e.gang-1] = nodes[:0]
		r.freeGangs = append(r.freeGangs, e.gang-1)
	}
	r.touch(a)
	r.noteWork(a) // fawkes_discrimination.go
	if js.finished == job.Tasks {
		r.jobDone(j)
	}
}

// freeOn gives node n back what count tasks of job, started at started,
// held on it, and drops their release from the node's list.
func (r *replay) freeOn(n int, job *Job, count int, started ledger.Time) {
	nd := &r.view.Nodes[n]
	if !r.freedMark[n] {
		r.freedMark[n] = true
		r.freed = append(r.freed, n)
	}
	d := job.nodeDemand()
	r.nodeTasks[n] -= count
	if r.nodeTasks[n] == 0 {
		copy(nd.Free, nd.Capacity) // exactly, not the residue of adds and subtracts
	} else {
		nd.Free.AddScaled(d, float64(count))
		for x := range nd.Free {
			nd.Free[x] = min(nd.Free[x], nd.Capacity[x])
		}
	}
	if r.backfill {
		// Equal releases are interchangeable, so any one that matches is
		// the one to drop; the list is short (the node's running groups).
		at := started.Add(job.walltime())
		rel := nd.Releases
		for i := range rel {
			if rel[i].At == at && equalScaled(rel[i].Free, d, count) {
				rel[i] = rel[len(rel)-1]
				nd.Releases = rel[:len(rel)-1]
				break
			}
		}
	}
}

// equalScaled reports whether v is count × d.
func equalScaled(v, d ledger.Vector, count int) bool {
	for x := range v {
		if v[x] != d[x]*float64(count) {
			return false
		}
	}
	return true
}

// release takes k×demand out of a running vector, exactly to zero when no
// task is left.
func release(v, demand ledger.Vector, k float64, left int) {
	if left == 0 {
		clear(v)
		return
	}
	v.AddScaled(demand, -k)
	for x := range v {
		v[x] = max(v[x], 0)
	}
}

func scaledInto(dst, demand ledger.Vector, k float64) ledger.Vector {
	for x := range dst {
		dst[x] = demand[x] * k
	}
	return dst
}

// jobDone records a job's completion and submits the jobs waiting for it.
func (r *replay) jobDone(j int) {
	job := &r.w.Jobs[j]
	js := &r.jobs[j]
	js.end = r.now
	acct := &r.accts[job.Account]
	acct.activeDead++
	root := &r.jobs[js.root]
	if root.stagesLeft--; root.stagesLeft == 0 {
		rootAcct := &r.accts[r.w.Jobs[js.root].Account]
		completion := r.now.Sub(root.arrived)
		r.completions[js.root] = completion
		rootAcct.jobs++
		wait := root.firstStart.Sub(root.arrived)
		r.maxWait = max(r.maxWait, wait)
		rootAcct.waitSum += wait.Seconds()
		rootAcct.completionSum += completion.Seconds()
		slowdown, _ := fawkes.Slowdown(completion, root.ideal)
		rootAcct.slowdownSum += max(1, slowdown)
	}
	if r.deps == nil {
		return
	}
	for _, d := range r.deps[j] {
		r.events.push(event{at: r.now.Add(r.w.Jobs[d].After.Delay), job: int32(d), kind: evArrive})
	}
}
