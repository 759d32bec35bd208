package sched

import (
	"fmt"
	"testing"

	"github.com/longfair/longfair/ledger"
)

// boostView has three accounts with one 4-core job each on nodes of
// 4 cores: "fresh" has used nothing (every policy ranks it first), "mid"
// and "heavy" have used more and more. boosts gives each job's boost.
func boostView(policy Policy, nodes int, boosts [3]int) *View {
	s := DefaultSettings()
	s.Policy = policy
	v := &View{Resources: []string{"cpu", "mem"}, Settings: s, Now: 1000}
	for i := range nodes {
		v.Nodes = append(v.Nodes, Node{ID: fmt.Sprint("n", i), Capacity: ledger.Vector{4, 16}, Free: ledger.Vector{4, 16}})
	}
	for i, name := range []string{"fresh", "mid", "heavy"} {
		used := float64(i) * 1e6
		v.Accounts = append(v.Accounts, Account{Name: name, Weight: 1,
			Running: ledger.Vector{0, 0}, Usage: ledger.Vector{used, used}, Baseline: ledger.Vector{0, 0}, BaselineRate: ledger.Vector{0, 0},
			Queue: []Job{{ID: uint64(i + 1), Demand: ledger.Vector{4, 1}, Pending: 1, Boost: boosts[i]}}})
	}
	return v
}

// An admin's boost crosses accounts: under every policy the engine ranks
// by key, the boosted job starts before the job fairness would start
// first, and of two boosted jobs the higher boost goes first; without a
// boost, the fair order stands.
func TestBoostedJobsGoBeforeTheFairOrder(t *testing.T) {
	for _, policy := range Policies() {
		row, _ := lookupPolicy(policy)
		if row.pass != nil || row.prepare != nil {
			continue // own passes and partitions: boost orders within an account only
		}
		t.Run(string(policy), func(t *testing.T) {
			first := func(boosts [3]int) string {
				v := boostView(policy, 1, boosts)
				ps := schedule(t, v)
				if len(ps) != 1 {
					t.Fatalf("boosts %v: %d placements on one 4-core node, want 1", boosts, len(ps))
				}
				return v.Accounts[ps[0].Account].Name
			}
			fair := first([3]int{})
			if fair == "heavy" {
				t.Fatalf("without boosts %s ranks heavy first; the test needs a fair order that heavy loses", policy)
			}
			if got := first([3]int{0, 0, 5}); got != "heavy" {
				t.Errorf("heavy's job boosted 5: %s started, want heavy (fair order: %s)", got, fair)
			}
			if got := first([3]int{0, 3, 5}); got != "heavy" {
				t.Errorf("boosts 3 (mid) and 5 (heavy): %s started, want heavy", got)
			}
			if got := first([3]int{0, 9, 5}); got != "mid" {
				t.Errorf("boosts 9 (mid) and 5 (heavy): %s started, want mid", got)
			}
			// Explain ranks the boosted account first, and says so.
			v := boostView(policy, 0, [3]int{0, 0, 5})
			v.Nodes = []Node{{ID: "busy", Capacity: ledger.Vector{4, 16}, Free: ledger.Vector{0, 16}}}
			x, err := NewEngine().Explain(v, 3)
			if err != nil {
				t.Fatal(err)
			}
			if x.Rank != 1 || x.Key.Class != "boosted" {
				t.Errorf("explain of the boosted job: rank %d class %q, want 1 and boosted", x.Rank, x.Key.Class)
			}
		})
	}
}
