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
