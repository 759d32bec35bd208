package server

import (
	"cmp"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// deliverPlaced sends the attempts an Assign command placed to the
// workers of their nodes. A node whose stream is not ready gets nothing
// now: its worker is sent what it lacks when its stream is reconciled.
func (t *leaderTerm) deliverPlaced(placed []fsm.PlacedTask) {
	byNode := make(map[string][]fsm.PlacedTask)
	for _, p := range placed {
		nodes := p.Nodes
		if len(nodes) == 0 {
			nodes = []string{p.Node}
		}
		for _, node := range nodes {
			byNode[node] = append(byNode[node], p)
		}
	}
	for node, list := range byNode {
		c := t.conn(node)
		if c == nil {
			continue
		}
		asgs := make([]*longfairv1.Assignment, 0, len(list))
		for _, p := range list {
			if a := t.assignment(attemptKey{p.JobID, p.Task, p.Attempt}, node, p.Queued, p.Limit); a != nil {
				asgs = append(asgs, a)
			}
		}
		c.deliver(asgs)
	}
}

// deliverTasks sends a worker attempts the ledger holds on its node: those
// placed on its free resources first, then the queued ones in the order
// they were queued. A worker starts a queued attempt in whatever room it
// sees, so it must know of every attempt the ledger gave that room to
// before it sees the queued ones.
func (t *leaderTerm) deliverTasks(c *workerConn, tasks []fsm.TaskInfo) {
	slices.SortFunc(tasks, deliveryOrder)
	asgs := make([]*longfairv1.Assignment, 0, len(tasks))
	for _, ti := range tasks {
		if a := t.assignment(keyOfTask(ti), c.node, ti.State == fsm.TaskQueued, ti.Limit); a != nil {
			asgs = append(asgs, a)
		}
	}
	c.deliver(asgs)
}

// deliveryOrder orders attempts for deliverTasks.
func deliveryOrder(a, b fsm.TaskInfo) int {
	qa, qb := a.State == fsm.TaskQueued, b.State == fsm.TaskQueued
	switch {
	case qa && !qb:
		return 1
	case qb && !qa:
		return -1
	case qa && a.AssignedAt != b.AssignedAt:
		return cmp.Compare(a.AssignedAt, b.AssignedAt)
	}
	return compareKeys(keyOfTask(a), keyOfTask(b))
}

// assignment builds the message that tells the worker of node to run
// attempt k, or its share of it (gang_conn.go), for at most limit; queued,
// once a slot frees. The limit is the attempt's own, not its job's: a
// job's walltime may be lowered after its attempt was placed.
func (t *leaderTerm) assignment(k attemptKey, node string, queued bool, limit time.Duration) *longfairv1.Assignment {
	j, err := t.jobs.get(k.job)
	if err != nil {
		t.log.Error("cannot read the job of a placed attempt; its worker will be sent it on the next sweep", "job", k.job, "error", err)
		return nil
	}
	demand := make(map[string]float64, len(j.Demand))
	for name, q := range j.Demand {
		if q != 0 {
			demand[name] = q
		}
	}
	a := &longfairv1.Assignment{
		Attempt: k.ref(), Account: j.Account, User: j.User, JobName: j.Name,
		Command: j.Command, Walltime: durationpb.New(limit), Demand: demand,
		Dir: j.Dir, Env: j.Env, EnvCaptured: j.EnvCaptured, RunAs: unixProto(j.RunAs), Queued: queued,
	}
	if j.Nodes > 1 {
		a.Ntasks = int32(j.Ranks)
		if !t.addAllocation(a, k, node) {
			return nil
		}
	}
	return a
}
