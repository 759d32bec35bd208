package sched

import "github.com/longfair/longfair/ledger"

// LookAheadView is the view a look-ahead pass schedules on, after an
// ordinary pass over v placed placed: the tasks placed are no longer
// pending, and the nodes are those that pass left without room for any
// pending one-node task, each with its look-ahead queue's room
// (Node.QueueFree) as what is free. Parallel and exclusive jobs are not
// offered: they never wait in a queue. A pass over it, with its
// placements marked Queued and their nodes mapped back through nodes
// (nodes[i] is the index in v of the look-ahead view's node i), fills
// each node's queue in the policy's order (package fsm: lookahead.go says
// why that order can bend by at most one queued task per slot). It
// returns nil when no node is full, nothing is left pending, or the
// policy is not a long-term one (Policy.LongTerm).
//
// A queued task runs once the task it waits behind has ended, so the pass
// ranks accounts as they will stand then: by what they have used, with
// nothing running but what the ordinary pass just placed. Counting what
// runs now would count the very tasks whose slots are being handed on,
// against the account that holds them: an account of short tasks, whose
// slots turn over more often, then fell to 0.6 of its share (e2e's
// TestLiveFairnessHMRFConverges). Policies that rank by what runs now
// have nothing else to go by, so they get no look-ahead.
//
// Nodes with room left are not queued on: what they can run now, the
// ordinary pass already placed, and a task it held back there (backfill
// keeping a reservation) must not start there from a queue instead. And
// under a backfill that keeps order (easy, conservative, none), the pass
// keeps it strictly (BackfillNone: nothing is queued past a task that
// cannot be), and there is none while a parallel or exclusive job waits,
// since queues that refill as tasks end would never let a node drain for
// it. Under greedy backfill such a job may wait behind narrow tasks for
// as long as they keep coming anyway, queued or not.
func LookAheadView(v *View, placed []Placement) (la *View, nodes []int) {
	if !v.Settings.Policy.LongTerm() {
		return nil, nil
	}
	greedy := v.Settings.reservationLimit() == 0 && v.Settings.Backfill != BackfillNone
	out := *v
	out.Accounts = make([]Account, len(v.Accounts))
	free := make([]ledger.Vector, len(v.Nodes))
	for i := range v.Nodes {
		free[i] = v.Nodes[i].Free.Clone()
	}
	for i := range v.Accounts {
		a := v.Accounts[i]
		a.Running = ledger.NewVector(len(a.Running))
		a.Queue = append([]Job(nil), a.Queue...)
		out.Accounts[i] = a
	}
	for _, p := range placed {
		a := &out.Accounts[p.Account]
		job := &a.Queue[p.Job]
		job.FirstIndex++
		job.Pending--
		a.Running.Add(job.Demand)
		if len(p.Nodes) == 0 {
			free[p.Node].Sub(job.Demand)
			continue
		}
		for _, n := range p.Nodes {
			free[n].Sub(job.PerNode)
		}
	}
	// The least a pending queueable task asks for, resource by resource:
	// a node whose free resources do not cover it can run none of them.
	var least ledger.Vector
	for i := range out.Accounts {
		for j := range out.Accounts[i].Queue {
			job := &out.Accounts[i].Queue[j]
			if job.Nodes > 1 || job.Exclusive {
				if job.Pending > 0 && !greedy {
					return nil, nil
				}
				job.Pending = 0
			}
			if job.Pending <= 0 {
				continue
			}
			if least == nil {
				least = job.Demand.Clone()
				continue
			}
			for k := range least {
				least[k] = min(least[k], job.Demand[k])
			}
		}
	}
	if least == nil {
		return nil, nil
	}
	out.Nodes = nil
	for i := range v.Nodes {
		nd := v.Nodes[i]
		if free[i].Fits(least) || nd.QueueFree == nil || !nd.QueueFree.Fits(least) {
			continue
		}
		out.Nodes = append(out.Nodes, Node{ID: nd.ID, Capacity: nd.Capacity, Free: nd.QueueFree.Clone()})
		nodes = append(nodes, i)
	}
	if len(out.Nodes) == 0 {
		return nil, nil
	}
	if !greedy {
		out.Settings.Backfill = BackfillNone
	}
	return &out, nodes
}

// LookAhead runs a look-ahead pass after an ordinary pass over v placed
// placed (LookAheadView) and returns its placements as placements over
// v, marked Queued; none when LookAheadView gives no view. The engine
// should not be the one that made placed: its placements are valid until
// its next pass.
func (e *Engine) LookAhead(v *View, placed []Placement) ([]Placement, error) {
	la, nodes := LookAheadView(v, placed)
	if la == nil {
		return nil, nil
	}
	queued, err := e.Schedule(la)
	if err != nil {
		return nil, err
	}
	for i := range queued {
		queued[i].Node, queued[i].Queued = nodes[queued[i].Node], true
	}
	return queued, nil
}
