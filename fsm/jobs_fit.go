package fsm

import (
	"github.com/longfair/longfair/ledger"
)

// knownShapes are the largest shapes of every node the cluster has seen,
// up or down (ledger.Shapes), from the committed node records in node-id
// order, so every replica words a refusal alike.
func (s *state) knownShapes() ledger.Shapes {
	if s.shapes == nil {
		for _, id := range sortedKeys(s.nodes) {
			s.shapes = s.shapes.Add(s.nodes[id].rec.Capacity)
		}
	}
	return s.shapes
}

// checkFit refuses a demand that no known node could hold even idle —
// or, for a task spanning nodes > 1 nodes, that fewer than that many
// known nodes could (checkNodesFit): such a job could never start, and
// would hold its SU for nothing. A node that is down counts — it may come
// back. With no node known yet (a new cluster before its workers join)
// there is nothing to judge, and the demand is accepted; the scheduler
// passes over a job the up nodes cannot hold, so it blocks nothing while
// it waits.
func (s *state) checkFit(demand ledger.Vector, nodes int) *Error {
	shapes := s.knownShapes()
	if len(shapes) == 0 {
		return nil
	}
	if shapes.Holds(demand) {
		return s.checkNodesFit(demand, nodes)
	}
	names := s.settings.Resources
	largest, those := "the largest known node has", "that"
	if len(shapes) > 1 {
		largest, those = "the largest known nodes have", "one of those"
	}
	return refuse(KindPrecondition, "no known node has %s: %s %s; ask for at most %s per task, or wait for a bigger node to join",
		shapes.Lacking(names, demand), largest, shapes.Describe(names), those)
}
