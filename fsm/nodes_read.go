package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// NodeInfo is a worker node.
type NodeInfo struct {
	ID       string
	Up       bool
	Class    string
	Account  string
	Address  string
	Capacity map[string]float64
	Free     map[string]float64
	// Running counts the attempts that hold its resources, Queued those
	// in its look-ahead queue (lookahead.go).
	Running, Queued int
	// Since is when the node last came up or went down.
	Since ledger.Time
	// Confinement is how its worker holds tasks to their demand.
	Confinement string
	// History is its last ups and downs, oldest first (nodes_history.go).
	History []NodeTransition
}

func (s *state) nodeInfo(nd *nodeState) NodeInfo {
	free := nd.free.Clone()
	for k := range free {
		free[k] = max(free[k], 0)
	}
	queued := 0
	for id := range nd.tasks {
		if a := s.running[id]; a != nil && a.State == TaskQueued {
			queued++
		}
	}
	return NodeInfo{
		ID: nd.rec.ID, Up: nd.rec.Up, Class: nd.rec.Class, Account: nd.rec.Account, Address: nd.rec.Address, Confinement: nd.rec.Confinement,
		Capacity: s.named(nd.rec.Capacity), Free: s.named(free), Running: len(nd.tasks) - queued, Queued: queued, Since: nd.rec.Since,
		History: slices.Clone(nd.history),
	}
}

// NodeAddresses returns the advertised addresses of the given nodes, by
// id; unknown ids are left out. It reads only those nodes, for the
// leader's assignments of a parallel task (one per node of it).
func (f *FSM) NodeAddresses(ids []string) map[string]string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if nd, ok := f.st.nodes[id]; ok {
			out[id] = nd.rec.Address
		}
	}
	return out
}

// Nodes lists every node, up and down, by id.
func (f *FSM) Nodes() []NodeInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]NodeInfo, 0, len(f.st.nodes))
	for _, id := range sortedKeys(f.st.nodes) {
		out = append(out, f.st.nodeInfo(f.st.nodes[id]))
	}
	return out
}
