package sched

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// randomTree arranges the accounts of v in a random tree of up to three
// levels with random group weights (some zero, some groups left unlisted so
// they default to weight 1).
func randomTree(r *rand.Rand, v *View) {
	orgs := 1 + r.IntN(3)
	var paths []string
	for o := range orgs {
		org := fmt.Sprintf("org%d", o)
		paths = append(paths, org)
		for g := range r.IntN(3) {
			paths = append(paths, fmt.Sprintf("%s/g%d", org, g))
		}
	}
	for _, p := range paths {
		if r.IntN(4) > 0 {
			v.Groups = append(v.Groups, Group{Path: p, Weight: float64(r.IntN(4))})
		}
	}
	for a := range v.Accounts {
		if k := r.IntN(len(paths) + 1); k < len(paths) {
			v.Accounts[a].Group = paths[k]
		}
	}
}

// flatDRF is weighted DRF written out for one machine: repeatedly give a
// task to the account with the least weighted dominant share whose next task
// fits, the account listed first on a tie. It returns the accounts in the
// order they got tasks.
func flatDRF(v *View) []int {
	n := len(v.Resources)
	capacity, free := ledger.NewVector(n), ledger.NewVector(n)
	for _, nd := range v.Nodes {
		capacity.Add(nd.Capacity)
		free.Add(nd.Free)
	}
	total := 0.0
	for _, a := range v.Accounts {
		total += a.Weight
	}
	used := make([]ledger.Vector, len(v.Accounts))
	queues := make([][]Job, len(v.Accounts))
	for i, a := range v.Accounts {
		used[i] = a.Running.Clone()
		queues[i] = append([]Job(nil), a.Queue...)
	}
	out := []int{}
	done := make([]bool, len(v.Accounts))
	for {
		best, bestShare := -1, 0.0
		for i, a := range v.Accounts {
			k := nextHoldable(v, queues[i])
			if done[i] || k == len(queues[i]) {
				continue
			}
			if !free.Fits(queues[i][k].Demand) {
				done[i] = true
				continue
			}
			w := refNormalize(a.Weight, total, len(v.Accounts))
			s := 0.0
			for j := range used[i] {
				if capacity[j] > 0 {
					s = max(s, used[i][j]/(capacity[j]*w))
				}
			}
			if best < 0 || s < bestShare {
				best, bestShare = i, s
			}
		}
		if best < 0 {
			return out
		}
		j := &queues[best][nextHoldable(v, queues[best])]
		used[best].Add(j.Demand)
		free.Sub(j.Demand)
		j.Pending--
		out = append(out, best)
	}
}

// oneMachineView turns a random view into one machine with no time-out.
func oneMachineView(r *rand.Rand, v *View) {
	v.Settings.Timeout = 0
	v.Nodes = v.Nodes[:1]
	v.Nodes[0].Capacity = ledger.Vector{float64(20 + r.IntN(100)), float64(40 + r.IntN(200)), float64(r.IntN(8))}
	v.Nodes[0].Free = v.Nodes[0].Capacity.Clone()
	for j := range v.Nodes[0].Free {
		v.Nodes[0].Free[j] -= float64(r.IntN(int(v.Nodes[0].Free[j])/4 + 1))
	}
}

func accountsServed(ps []Placement) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Account
	}
	return out
}

func TestHDRFOnAFlatTreeIsDRF(t *testing.T) {
	// With no groups, every account is a child of the root: H-DRF is
	// weighted DRF, task for task.
	r := rand.New(rand.NewPCG(3, 5))
	for iter := range 300 {
		v := randomView(r, HDRF, Affinity)
		oneMachineView(r, v)
		if got, want := accountsServed(schedule(t, v)), flatDRF(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: hdrf on a flat tree served %v, drf %v", iter, got, want)
		}
	}
}

func TestDFFOnAFlatTreeIsDRFWhenEveryAccountNeedsEveryResource(t *testing.T) {
	// The Fair Resource of a root child is R·w_i/Σw when every account
	// needs every resource, so fairness u_ij/fr_ij is the weighted share
	// DRF ranks by.
	r := rand.New(rand.NewPCG(8, 13))
	for iter := range 300 {
		v := randomView(r, DFF, Affinity)
		oneMachineView(r, v)
		v.Nodes[0].Capacity[2] = max(v.Nodes[0].Capacity[2], 1)
		v.Nodes[0].Free[2] = v.Nodes[0].Capacity[2]
		for i := range v.Accounts {
			a := &v.Accounts[i]
			a.Running[2] = 1
			a.Queue = append(a.Queue, Job{ID: uint64(9000 + i), Demand: ledger.Vector{1, 1, 1}, Pending: 1 + r.IntN(20)})
		}
		if got, want := accountsServed(schedule(t, v)), flatDRF(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: dff on a flat tree served %v, drf %v", iter, got, want)
		}
	}
}

func schedule(t *testing.T, v *View) []Placement {
	t.Helper()
	ps, err := NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	return append([]Placement(nil), ps...)
}

func TestTreePassesAreWorkConservingAndNeverOvercommit(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 34))
	eng := NewEngine() // reused across passes, as the leader does
	for iter := range 400 {
		policy := []Policy{HDRF, DFF}[iter%2]
		placement := []PlacementStrategy{Affinity, BestFit, Spread}[iter%3]
		v := randomView(r, policy, placement)
		randomTree(r, v)
		ps, err := eng.Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		checkWorkConserving(t, iter, v, ps, nil)
		again, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(ps, again, samePlacement) {
			t.Fatalf("iteration %d (%s): a reused engine and a fresh one disagree", iter, policy)
		}
	}
}

func TestTreePassesMatchTheReference(t *testing.T) {
	// On one machine (fitting the node is fitting the totals) the engine
	// must place exactly what the brute-force reference, recomputing every
	// key from the papers' definitions before each placement, places.
	r := rand.New(rand.NewPCG(55, 89))
	for iter := range 400 {
		policy := []Policy{HDRF, DFF}[iter%2]
		v := randomView(r, policy, Affinity)
		oneMachineView(r, v)
		if len(v.Accounts) > 9 {
			v.Accounts = v.Accounts[:9] // the reference names leaves by one digit
		}
		randomTree(r, v)
		accts := accountsServed(schedule(t, v))
		want := newRefTree(v).run()
		if !reflect.DeepEqual(accts, want) {
			t.Fatalf("iteration %d (%s): engine served accounts %v, reference %v\ngroups %+v\naccounts %s",
				iter, policy, accts, want, v.Groups, describeAccounts(v))
		}
	}
}

func describeAccounts(v *View) string {
	var b strings.Builder
	for _, a := range v.Accounts {
		fmt.Fprintf(&b, "\n  %s w=%v group=%q running=%v", a.Name, a.Weight, a.Group, a.Running)
		for _, j := range a.Queue {
			fmt.Fprintf(&b, " [%v×%d]", j.Demand, j.Pending)
		}
	}
	return b.String()
}

// oneMachine is a view of one machine with the given capacity and accounts
// that each run tasks of one shape, backlogged.
func oneMachine(policy Policy, capacity ledger.Vector, groups []Group, accts ...Account) *View {
	n := len(capacity)
	v := &View{
		Resources: []string{"cpu", "mem", "gpu"}[:n],
		Nodes:     []Node{{ID: "m", Capacity: capacity, Free: capacity.Clone()}},
		Groups:    groups,
		Settings:  Settings{Policy: policy, Quantum: time.Minute, Placement: Affinity},
	}
	for i := range accts {
		a := accts[i]
		a.Running, a.Usage, a.Baseline, a.BaselineRate = ledger.NewVector(n), ledger.NewVector(n), ledger.NewVector(n), ledger.NewVector(n)
		v.Accounts = append(v.Accounts, a)
	}
	return v
}

func backlog(id uint64, demand ...float64) []Job {
	return []Job{{ID: id, Demand: demand, Pending: 1000}}
}

// tasksPerAccount counts the placements of each account.
func tasksPerAccount(ps []Placement, accounts int) []int {
	n := make([]int, accounts)
	for _, p := range ps {
		n[p.Account]++
	}
	return n
}

func TestHDRFPaperExampleSharesGPUsAcrossTheHierarchy(t *testing.T) {
	// H-DRF's example of blocking: n1, n2 and n3,1 want CPUs, n3,2 and n4
	// GPUs, all weights equal. Once the CPUs are gone, n3 must not keep
	// winning GPUs for n3,2 on the strength of n3,1's CPUs: the GPUs split
	// half and half between n3,2 and n4, the CPUs in thirds.
	for _, policy := range []Policy{HDRF, DFF} {
		v := oneMachine(policy, ledger.Vector{30, 30}, nil,
			Account{Name: "n1", Weight: 1, Queue: backlog(1, 1, 0)},
			Account{Name: "n2", Weight: 1, Queue: backlog(2, 1, 0)},
			Account{Name: "n31", Weight: 1, Group: "n3", Queue: backlog(3, 1, 0)},
			Account{Name: "n32", Weight: 1, Group: "n3", Queue: backlog(4, 0, 1)},
			Account{Name: "n4", Weight: 1, Queue: backlog(5, 0, 1)},
		)
		v.Resources = []string{"cpu", "gpu"}
		got := tasksPerAccount(schedule(t, v), 5)
		if want := []int{10, 10, 10, 15, 15}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tasks n1 n2 n3,1 n3,2 n4 = %v, want %v", policy, got, want)
		}
	}
}

func TestBlockedAccountLeavesItsFairResourceToItsSiblings(t *testing.T) {
	// Group G holds A (CPU only) and B (CPU and MIC); C is alone in H. The
	// cluster has 100 CPUs and 2 MICs: B is blocked after two tasks, and the
	// CPUs of its Fair Resource go to its sibling A, not to C, so G and H
	// still get half the CPUs each.
	for _, policy := range []Policy{HDRF, DFF} {
		v := oneMachine(policy, ledger.Vector{100, 2}, []Group{{Path: "G", Weight: 1}, {Path: "H", Weight: 1}},
			Account{Name: "A", Weight: 1, Group: "G", Queue: backlog(1, 1, 0)},
			Account{Name: "B", Weight: 1, Group: "G", Queue: backlog(2, 1, 1)},
			Account{Name: "C", Weight: 1, Group: "H", Queue: backlog(3, 1, 0)},
		)
		v.Resources = []string{"cpu", "mic"}
		got := tasksPerAccount(schedule(t, v), 3)
		if got[0]+got[1] != 50 || got[2] != 50 {
			t.Errorf("%s: tasks A B C = %v, want G (A and B) and H (C) to get 50 CPUs each", policy, got)
		}
		// H-DRF judges B by its dominant share, its MIC: one task is half
		// the MICs, as much as A's 49 CPUs weigh. DFF judges B's MICs
		// against its Fair Resource of MICs, all of them (nobody else needs
		// MICs), and lets it have both.
		if want := map[Policy]int{HDRF: 1, DFF: 2}[policy]; got[1] != want {
			t.Errorf("%s: B got %d tasks, want %d", policy, got[1], want)
		}
	}
}

func TestGroupWeightsDivideTheCluster(t *testing.T) {
	// Two organisations weighted 3:1, two equal accounts in each: 120 CPUs
	// go 45, 45, 15, 15 — whatever the accounts' own weights say about
	// accounts in the other organisation.
	for _, policy := range []Policy{HDRF, DFF} {
		v := oneMachine(policy, ledger.Vector{120}, []Group{{Path: "big", Weight: 3}, {Path: "small", Weight: 1}},
			Account{Name: "a", Weight: 5, Group: "big", Queue: backlog(1, 1)},
			Account{Name: "b", Weight: 5, Group: "big", Queue: backlog(2, 1)},
			Account{Name: "c", Weight: 1, Group: "small", Queue: backlog(3, 1)},
			Account{Name: "d", Weight: 1, Group: "small", Queue: backlog(4, 1)},
		)
		got := tasksPerAccount(schedule(t, v), 4)
		if want := []int{45, 45, 15, 15}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tasks = %v, want %v", policy, got, want)
		}
	}
}

func TestTreeIsValidated(t *testing.T) {
	good := func() *View {
		return oneMachine(DFF, ledger.Vector{8}, []Group{{Path: "org/g", Weight: 2}},
			Account{Name: "A", Weight: 1, Group: "org/g", Queue: backlog(1, 1)})
	}
	cases := map[string]func(v *View){
		"empty group path":       func(v *View) { v.Groups[0].Path = "" },
		"double slash":           func(v *View) { v.Groups[0].Path = "org//g" },
		"trailing slash":         func(v *View) { v.Accounts[0].Group = "org/" },
		"negative group weight":  func(v *View) { v.Groups[0].Weight = -1 },
		"group listed twice":     func(v *View) { v.Groups = append(v.Groups, Group{Path: "org/g", Weight: 1}) },
		"spaces around the name": func(v *View) { v.Accounts[0].Group = " org" },
	}
	for name, spoil := range cases {
		v := good()
		spoil(v)
		_, err := NewEngine().Schedule(v)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "group") {
			t.Errorf("%s: error %q does not say which group is wrong", name, err)
		}
	}
	if _, err := NewEngine().Schedule(good()); err != nil {
		t.Fatalf("the unspoiled view is refused: %v", err)
	}
}
