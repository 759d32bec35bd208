package sched

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// withinFawkesPartition recomputes, independently of the engine, whether
// one more task of demand d keeps account a inside its fawkes partition:
// its share of the cluster, or, when nobody has a share, its weight's part
// among the accounts with work.
func withinFawkesPartition(v *View, a int, ps []Placement, d ledger.Vector) bool {
	capacity := ledger.NewVector(len(v.Resources))
	for _, n := range v.Nodes {
		capacity.Add(n.Capacity)
	}
	share := v.Accounts[a].Share
	anyShare := false
	for _, acct := range v.Accounts {
		anyShare = anyShare || acct.Share > 0
	}
	if !anyShare {
		total, active := 0.0, 0
		for _, acct := range v.Accounts {
			pending := false
			for _, j := range acct.Queue {
				pending = pending || j.Pending > 0 && someNodeHolds(v, j.Demand)
			}
			if pending || acct.Running.Sum() > 0 {
				total += acct.Weight
				active++
			}
		}
		switch {
		case total > 0:
			share = v.Accounts[a].Weight / total
		default:
			share = 1 / float64(active)
		}
	}
	held := v.Accounts[a].Running.Clone()
	for _, p := range ps {
		if p.Account == a {
			held.Add(v.Accounts[a].Queue[p.Job].Demand)
		}
	}
	// An account that held nothing may start one task of any size.
	var first ledger.Vector
	if v.Accounts[a].Running.Sum() == 0 {
		for _, j := range v.Accounts[a].Queue {
			if j.Pending > 0 && someNodeHolds(v, j.Demand) {
				first = j.Demand
				break
			}
		}
	}
	held.Add(d)
	for j := range held {
		limit := capacity[j] * share
		if first != nil {
			limit = max(limit, first[j])
		}
		if held[j] > limit+1e-9 {
			return false
		}
	}
	return true
}

func TestFawkesKeepsAccountsInTheirShares(t *testing.T) {
	// Shares 0.6, 0.3 and 0.1 of 100 CPUs, everyone backlogged with 1-CPU
	// tasks: 60, 30 and 10 tasks, and nothing more however idle the rest.
	v := oneMachine(Fawkes, ledger.Vector{100}, nil,
		Account{Name: "a", Weight: 1, Share: 0.6, Queue: backlog(1, 1)},
		Account{Name: "b", Weight: 1, Share: 0.3, Queue: backlog(2, 1)},
		Account{Name: "c", Weight: 1, Share: 0.1, Queue: backlog(3, 1)},
	)
	if got := tasksPerAccount(schedule(t, v), 3); got[0] != 60 || got[1] != 30 || got[2] != 10 {
		t.Errorf("tasks %v, want 60, 30, 10", got)
	}
	// An account whose share shrank below what it runs starts nothing.
	v.Accounts[0].Running = ledger.Vector{70}
	v.Nodes[0].Free = ledger.Vector{30}
	if got := tasksPerAccount(schedule(t, v), 3); got[0] != 0 {
		t.Errorf("an account over its share started %d tasks", got[0])
	}
	// A task larger than the whole partition still runs, alone, once the
	// account holds nothing: a small partition must not block it for ever.
	v = oneMachine(Fawkes, ledger.Vector{100}, nil,
		Account{Name: "a", Weight: 1, Share: 0.9, Queue: backlog(1, 1)},
		Account{Name: "b", Weight: 1, Share: 0.1, Queue: backlog(2, 20)},
	)
	if got := tasksPerAccount(schedule(t, v), 2); got[0] != 80 || got[1] != 1 {
		t.Errorf("tasks %v, want 80 for a (100 less b's one big task) and that one task for b", got)
	}
}

func TestFawkesWithoutSharesSplitsByWeightAmongActiveAccounts(t *testing.T) {
	// No weighting has run yet: the two accounts with work split the
	// cluster 3:1 by weight; the idle account's weight does not count.
	v := oneMachine(Fawkes, ledger.Vector{100}, nil,
		Account{Name: "a", Weight: 3, Queue: backlog(1, 1)},
		Account{Name: "b", Weight: 1, Queue: backlog(2, 1)},
		Account{Name: "idle", Weight: 4},
	)
	if got := tasksPerAccount(schedule(t, v), 3); got[0] != 75 || got[1] != 25 {
		t.Errorf("tasks %v, want 75 and 25", got)
	}
}

func TestFawkesPassesStayInsidePartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 21))
	for iter := range 300 {
		v := randomView(r, Fawkes, []PlacementStrategy{Affinity, BestFit, Spread}[iter%3])
		left := 1.0
		for i := range v.Accounts {
			if r.IntN(3) > 0 {
				s := left * r.Float64()
				v.Accounts[i].Share = s
				left -= s
			}
		}
		ps := schedule(t, v)
		free, queues := applyPass(t, v, ps)
		// Whoever started a task is inside its partition with it.
		placed := make([]bool, len(v.Accounts))
		for _, p := range ps {
			placed[p.Account] = true
		}
		for a := range v.Accounts {
			if placed[a] && !withinFawkesPartition(v, a, ps, ledger.NewVector(len(v.Resources))) {
				t.Fatalf("iteration %d: account %d started tasks beyond its partition", iter, a)
			}
		}
		// Whoever waits either has no room in its partition or no node.
		for a, q := range queues {
			next := nextHoldable(v, q)
			if next == len(q) || !withinFawkesPartition(v, a, ps, q[next].Demand) {
				continue
			}
			for n := range free {
				if free[n].Fits(q[next].Demand) {
					t.Fatalf("iteration %d: account %d's next task fits its partition and node %d, but waits", iter, a, n)
				}
			}
		}
	}
}

func TestFawkesSharesAndSettingsAreValidated(t *testing.T) {
	mk := func() *View {
		return oneMachine(Fawkes, ledger.Vector{8}, nil,
			Account{Name: "a", Weight: 1, Share: 0.5, Queue: backlog(1, 1)},
			Account{Name: "b", Weight: 1, Share: 0.5, Queue: backlog(2, 1)})
	}
	cases := map[string]func(v *View){
		"share above 1":       func(v *View) { v.Accounts[0].Share = 1.5 },
		"negative share":      func(v *View) { v.Accounts[0].Share = -0.1 },
		"shares over 1":       func(v *View) { v.Accounts[0].Share = 0.6 },
		"bad weighting":       func(v *View) { v.Settings.Fawkes.Weighting = "fifo" },
		"bad guarantee":       func(v *View) { v.Settings.Fawkes.Guarantee = 2 },
		"negative interval":   func(v *View) { v.Settings.Fawkes.Interval = -time.Minute },
		"unknown disk":        func(v *View) { v.Settings.Fawkes.Disk = "disk" },
		"throughput base 0.5": func(v *View) { v.Settings.Fawkes.Base = 0.5 },
	}
	for name, spoil := range cases {
		v := mk()
		spoil(v)
		_, err := NewEngine().Schedule(v)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "fawkes") {
			t.Errorf("%s: error %q does not say it is about fawkes", name, err)
		}
	}
	if _, err := NewEngine().Schedule(mk()); err != nil {
		t.Fatalf("the unspoiled view is refused: %v", err)
	}
}
