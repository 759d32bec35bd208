package sched

import (
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// EASY (Lifka 1995) lets any job that ends before the reservation's start
// run on any free node, the reserved ones included: it is gone by then.
// Here four one-core nodes, node a busy until now+100s; the wide account's
// 4-node job is reserved at now+100s on all four; the narrow account's
// 2-node job ends in 10s. Nothing stops it from running now on two of the
// three idle nodes, and nothing else would use them before +100s.
//
// The engine refuses it today: claimBeforeReservation takes only one-node
// tasks, so a parallel job that ends before the reservation may use only
// nodes the reservation does not need. On a log where every job of more
// than one processor is a parallel job (the archive's SP2 and CM-5 logs,
// one processor per node) that leaves reserved nodes idle for hours.
//
// The fix: in claimBeforeReservation, for a parallel task that ends by T,
// restore every reserved node's true free vector in the index, claimFree,
// then copy the index's free vectors back into r.real and re-mask each
// reserved node (its spare is untouched: the task is gone by T).
func TestBackfillStartsAShortParallelJobOnReservedNodes(t *testing.T) {
	now := ledger.Time(1_000 * time.Second)
	zero := ledger.Vector{0}
	one := ledger.Vector{1}
	v := &View{
		Now: now, Resources: []string{"cpu"},
		Settings: Settings{Policy: DRF, Quantum: time.Minute, Placement: BestFit, Backfill: BackfillEASY},
		Nodes: []Node{
			{ID: "a", Capacity: one, Free: zero, Releases: []Release{{At: now.Add(100 * time.Second), Free: one}}},
			{ID: "b", Capacity: one, Free: one},
			{ID: "c", Capacity: one, Free: one},
			{ID: "d", Capacity: one, Free: one},
		},
		Accounts: []Account{
			{Name: "wide", Weight: 1, Running: zero, Usage: zero, Baseline: zero, BaselineRate: zero,
				Queue: []Job{{ID: 1, Nodes: 4, PerNode: one, Demand: ledger.Vector{4}, Pending: 1, Walltime: time.Hour}}},
			{Name: "narrow", Weight: 1, Running: one, Usage: zero, Baseline: zero, BaselineRate: zero,
				Queue: []Job{{ID: 2, Nodes: 2, PerNode: one, Demand: ledger.Vector{2}, Pending: 1, Walltime: 10 * time.Second}}},
		},
	}
	e := NewEngine()
	ps, err := e.Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := e.LastReservation()
	if !ok || r.Account != 0 || r.At != now.Add(100*time.Second) || len(r.Nodes) != 4 {
		t.Fatalf("reservation %+v (made %v), want the wide job at now+100s on all four nodes", r, ok)
	}
	if len(ps) != 1 || ps[0].Account != 1 || len(ps[0].Nodes) != 2 {
		t.Fatalf("placements %+v, want the narrow 2-node job, which ends 90s before the reservation, started now", ps)
	}
}
