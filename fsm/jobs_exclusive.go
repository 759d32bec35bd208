package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longfair/longfair/ledger"
)

// Exclusive jobs (Slurm's --exclusive) take each of their nodes whole.
// At submission the job's per-node demand becomes the capacity of a node
// class — the distinct capacities of the known nodes, up or down — that
// holds what it asked for on enough nodes: the class whose node costs the
// fewest SU per hour, then the smallest capacity in resource order, so
// that every replica chooses alike from the committed node records. From
// then on the job is a job of that demand: fairness, the hold and the
// charge count whole nodes, and the FSM (placementNodes) and the engine
// (package sched: exclusive.go) put its tasks only on idle nodes of
// exactly that class. What it asked for is kept (Asked) so that a
// retried request still matches it.

// wholeNodes returns the class capacity an exclusive job of asked per
// node on nodes nodes takes, or why none can hold it.
func (s *state) wholeNodes(asked ledger.Vector, nodes int) (ledger.Vector, *Error) {
	nodes = max(nodes, 1)
	type class struct {
		capacity ledger.Vector
		count    int
		hourly   ledger.SU
	}
	var classes []*class
	for _, id := range sortedKeys(s.nodes) {
		c := pad(s.nodes[id].rec.Capacity, len(asked))
		i := slices.IndexFunc(classes, func(k *class) bool { return sameBits(k.capacity, c) })
		if i < 0 {
			hourly, err := ledger.Cost(3600e9, c, s.settings.BillingWeights, s.settings.BillingRule)
			if err != nil {
				return nil, invalid("%v", err)
			}
			classes = append(classes, &class{capacity: c, hourly: hourly})
			i = len(classes) - 1
		}
		classes[i].count++
	}
	if len(classes) == 0 {
		return nil, refuse(KindPrecondition, "no node is known yet, and an exclusive job takes whole nodes of a class the cluster has: submit it once the workers have joined, or without --exclusive")
	}
	var best *class
	for _, k := range classes {
		if k.count < nodes || !k.capacity.Fits(asked) {
			continue
		}
		if best == nil || k.hourly < best.hourly || k.hourly == best.hourly && slices.Compare(k.capacity, best.capacity) < 0 {
			best = k
		}
	}
	if best == nil {
		names := s.settings.Resources
		var have []string
		for _, k := range classes {
			have = append(have, fmt.Sprintf("%d × %s", k.count, ledger.FormatVector(names, k.capacity)))
		}
		return nil, refuse(KindPrecondition, "no class of known nodes has %d nodes that each hold %s, to take whole: the nodes are %s; ask for fewer nodes or less per node",
			nodes, ledger.FormatVector(names, asked), strings.Join(have, ", "))
	}
	return best.capacity.Clone(), nil
}

// onItsClass reports whether node nd is of exclusive job j's class (with
// the job's demand free it is then idle); any node is for other jobs.
func (j *jobRecord) onItsClass(nd *nodeState) bool {
	return !j.Exclusive || sameBits(pad(nd.rec.Capacity, len(j.Demand)), j.Demand)
}
