package sched

import (
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// The look-ahead pass decides who runs in a slot once the task in it has
// ended, so it ranks by what accounts have used, not by what they run
// now: here A runs the whole node but has used nothing, B has used 100
// cpu-seconds and runs nothing. The ordinary pass would rank B first (A's
// 4 running cpu, projected over the one-minute quantum, outweigh B's
// history); the look-ahead pass queues A's task. A policy that ranks by
// what runs now gets no look-ahead.
func TestLookAheadRanksByWhatAccountsUsed(t *testing.T) {
	view := func(p Policy) *View {
		return &View{
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{4}, Free: ledger.Vector{0}, QueueFree: ledger.Vector{4}}},
			Accounts: []Account{
				{Name: "A", Weight: 1, Running: ledger.Vector{4}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{2},
					Queue: []Job{{ID: 1, Demand: ledger.Vector{4}, Pending: 5}}},
				{Name: "B", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{100}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{2},
					Queue: []Job{{ID: 2, Demand: ledger.Vector{4}, Pending: 5}}},
			},
			Settings: Settings{Policy: p, Quantum: time.Minute, Placement: Affinity},
		}
	}
	v := view(HMRF)
	// The ordinary pass's ranking, on a node with room.
	roomy := view(HMRF)
	roomy.Nodes[0].Free = ledger.Vector{4}
	ps, err := NewEngine().Schedule(roomy)
	if err != nil || len(ps) != 1 || ps[0].Account != 1 {
		t.Fatalf("the ordinary pass placed %+v (%v), want B's task first", ps, err)
	}
	la, nodes := LookAheadView(v, nil)
	if la == nil || len(nodes) != 1 || nodes[0] != 0 {
		t.Fatalf("no look-ahead view of a full node with tasks pending: %v, %v", la, nodes)
	}
	ps, err = NewEngine().Schedule(la)
	if err != nil || len(ps) != 1 || ps[0].Account != 0 {
		t.Fatalf("the look-ahead pass queued %+v (%v), want A's task: it has used nothing", ps, err)
	}
	if v.Accounts[0].Running[0] != 4 {
		t.Fatal("LookAheadView changed the view it was given")
	}
	for _, p := range []Policy{DRF, AF, Static, QKnobler, BPF, SP, HDRF, DFF, Fawkes} {
		if la, _ := LookAheadView(view(p), nil); la != nil {
			t.Errorf("%s ranks by what runs now, and got a look-ahead view", p)
		}
	}
	for _, p := range []Policy{HMRF, LTDRF, LTAF, LTRF} {
		if la, _ := LookAheadView(view(p), nil); la == nil {
			t.Errorf("%s ranks by usage, and got no look-ahead view", p)
		}
	}
}

// Under a backfill that keeps order, the look-ahead pass keeps it
// strictly, and queues nothing while a parallel job waits: queues that
// refill as tasks end would never let nodes drain for it.
func TestLookAheadKeepsTheBackfillsOrder(t *testing.T) {
	view := func(b Backfill, parallel bool) *View {
		v := &View{
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{4}, Free: ledger.Vector{0}, QueueFree: ledger.Vector{4}}},
			Accounts: []Account{{Name: "A", Weight: 1, Running: ledger.Vector{4}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{4},
				Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: 5}}}},
			Settings: Settings{Policy: HMRF, Quantum: time.Minute, Placement: Affinity, Backfill: b},
		}
		if parallel {
			v.Accounts[0].Queue = append(v.Accounts[0].Queue, Job{ID: 2, Demand: ledger.Vector{8}, Nodes: 2, PerNode: ledger.Vector{4}, Pending: 1})
		}
		return v
	}
	for _, c := range []struct {
		backfill Backfill
		parallel bool
		want     Backfill // "": no look-ahead view
	}{
		{BackfillGreedy, false, BackfillGreedy},
		{BackfillGreedy, true, BackfillGreedy},
		{BackfillEASY, false, BackfillNone},
		{BackfillEASY, true, ""},
		{BackfillNone, true, ""},
	} {
		la, _ := LookAheadView(view(c.backfill, c.parallel), nil)
		switch {
		case c.want == "" && la != nil:
			t.Errorf("backfill %s with a parallel job waiting: a look-ahead view", c.backfill)
		case c.want != "" && (la == nil || la.Settings.Backfill != c.want):
			t.Errorf("backfill %s (parallel job waiting: %v): look-ahead view %v, want one with backfill %s", c.backfill, c.parallel, la != nil, c.want)
		}
	}
}
