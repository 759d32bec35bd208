package fsm

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Parallel jobs. A job whose tasks span Nodes > 1 nodes (an MPI run)
// stores its demand per node; each task is placed on that many distinct
// nodes in one placement of one Assign, which apply re-checks whole —
// every node known, up and with the per-node demand free — and applies
// whole or drops whole: never a half-placed task. The attempt holds the
// per-node demand on each of its nodes, and everything else counts its
// whole allocation (Nodes × the per-node demand): the fairness book, the
// account's running vector, the SU hold and the charge. Losing any of its
// nodes loses the attempt on all of them (nodeDown loses every attempt
// with a task on the node, and endAttempt frees every node), charged once.

// allocation is what one task of the job holds in all.
func (j *jobRecord) allocation() ledger.Vector { return allocation(j.Demand, j.Nodes) }

// allocation is per-node demand × nodes (0 and 1 mean one node).
func allocation(perNode ledger.Vector, nodes int) ledger.Vector {
	total := perNode.Clone()
	if nodes > 1 {
		for k := range total {
			total[k] *= float64(nodes)
		}
	}
	return total
}

// nodesPhrase words a task's node count for messages: "" for one node.
func nodesPhrase(nodes int) string {
	if nodes > 1 {
		return fmt.Sprintf(" of %d nodes", nodes)
	}
	return ""
}

// viewJob is the scheduler's queue entry for pending tasks [first,
// first+pending) of the job.
func (j *jobRecord) viewJob(first, pending int) sched.Job {
	sj := sched.Job{ID: j.ID, Demand: j.allocation(), FirstIndex: first, Pending: pending, Walltime: j.Walltime}
	if j.Nodes > 1 {
		sj.Nodes, sj.PerNode = j.Nodes, j.Demand.Clone()
	}
	sj.Exclusive, sj.Boost = j.Exclusive, j.Priority
	return sj
}

// nodeDemand is what the attempt holds on each of its nodes.
func (a *attemptRecord) nodeDemand() ledger.Vector {
	if a.NodeDemand != nil {
		return a.NodeDemand
	}
	return a.Demand
}

// allNodes lists the nodes the attempt holds, its head first.
func (a *attemptRecord) allNodes() []string {
	if len(a.Nodes) > 0 {
		return a.Nodes
	}
	return []string{a.Node}
}

// MaxCredentialBytes bounds a parallel task's exec credential.
const MaxCredentialBytes = 128

// checkPlacementNodes checks the shape of placement i's node list: empty
// for a one-node task, or distinct valid node ids headed by Node.
func checkPlacementNodes(i int, p TaskPlacement) *Error {
	if len(p.Credential) > MaxCredentialBytes {
		return invalid("placement %d has a credential of %d bytes: at most %d", i, len(p.Credential), MaxCredentialBytes)
	}
	if len(p.Nodes) == 0 {
		return nil
	}
	if len(p.Nodes) > MaxNodesPerJob {
		return invalid("placement %d lists %d nodes: a task spans at most %d", i, len(p.Nodes), MaxNodesPerJob)
	}
	if p.Nodes[0] != p.Node {
		return invalid("placement %d lists nodes %q headed by %q, not its node %q", i, p.Nodes[0], p.Nodes[0], p.Node)
	}
	seen := make(map[string]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		if err := checkNodeID("placement node", n); err != nil {
			return err
		}
		if seen[n] {
			return invalid("placement %d lists node %q twice: a task's nodes are distinct", i, n)
		}
		seen[n] = true
	}
	return nil
}

// placementNodes returns the nodes placement p takes for a task of job j,
// or why it cannot be applied: the wrong number of nodes for the job, or
// any of them down, unknown or without the per-node demand free. Nothing
// is taken here; the caller takes all of them or none.
func (s *state) placementNodes(j *jobRecord, p TaskPlacement) ([]*nodeState, string) {
	names := p.Nodes
	if len(names) == 0 {
		names = []string{p.Node}
	}
	if want := max(j.Nodes, 1); len(names) != want {
		return nil, fmt.Sprintf("the placement lists %d nodes and the job's tasks span %d", len(names), want)
	}
	if p.Queued && (j.Nodes > 1 || j.Exclusive) {
		return nil, "only a one-node task that does not take its node whole waits in a node's queue"
	}
	nodes := make([]*nodeState, len(names))
	for i, name := range names {
		nd, ok := s.nodes[name]
		if !ok || !nd.rec.Up {
			return nil, fmt.Sprintf("node %s is down or unknown", name)
		}
		if p.Queued && !queueRoom(nd).Fits(j.Demand) {
			return nil, fmt.Sprintf("node %s's look-ahead queue has no room for the task", name)
		}
		if !p.Queued && !room(nd).Fits(j.Demand) {
			return nil, fmt.Sprintf("node %s no longer has the free resources the task needs", name)
		}
		if !j.onItsClass(nd) {
			return nil, fmt.Sprintf("node %s is not of the class the exclusive job takes whole", name)
		}
		nodes[i] = nd
	}
	return nodes, ""
}

// checkNodesFit refuses a task spanning nodes > 1 nodes when fewer known
// nodes (up or down) could each hold demand even idle, naming how many
// could: the widest such job that could ever start.
func (s *state) checkNodesFit(demand ledger.Vector, nodes int) *Error {
	if nodes <= 1 {
		return nil
	}
	fit := 0 // a count: no order needed
	for _, nd := range s.nodes {
		if nd.rec.Capacity.Fits(demand) {
			fit++
		}
	}
	if fit >= nodes {
		return nil
	}
	return refuse(KindPrecondition, "the job asks for %d nodes with %s each, and only %d known nodes can hold that: ask for at most %d nodes of this size, or less per node",
		nodes, ledger.FormatVector(s.settings.Resources, demand), fit, fit)
}
