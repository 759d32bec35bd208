package sched

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// randomView builds a cluster with heterogeneous nodes (some with mic) and
// accounts with random queues and fairness history.
func randomView(r *rand.Rand, policy Policy, placement PlacementStrategy) *View {
	v := &View{
		Now:       ledger.Time(r.Int64N(1e12)),
		Resources: []string{"cpu", "mem", "mic"},
		Settings:  Settings{Policy: policy, Quantum: time.Minute, Placement: placement, Timeout: time.Duration(r.IntN(3)) * time.Hour},
	}
	for i := range 1 + r.IntN(40) {
		c := ledger.Vector{float64(int(4) << r.IntN(4)), float64(int(8) << r.IntN(5)), 0}
		if r.IntN(4) == 0 {
			c[2] = float64(1 + r.IntN(4))
		}
		free := c.Clone()
		for j := range free {
			free[j] = float64(r.IntN(int(free[j]) + 1))
		}
		v.Nodes = append(v.Nodes, Node{ID: "n" + string(rune('a'+i%26)), Capacity: c, Free: free})
	}
	for i := range 1 + r.IntN(12) {
		a := Account{
			Name: "acct" + string(rune('A'+i)), Weight: float64(r.IntN(4)),
			Running:      ledger.Vector{float64(r.IntN(10)), float64(r.IntN(20)), 0},
			Usage:        ledger.Vector{float64(r.IntN(1e5)), float64(r.IntN(1e5)), float64(r.IntN(100))},
			Baseline:     ledger.Vector{float64(r.IntN(1e5)), float64(r.IntN(1e5)), 0},
			BaselineRate: ledger.Vector{float64(r.IntN(10)), float64(r.IntN(10)), 0},
			WaitingSince: v.Now - ledger.Time(r.Int64N(int64(4*time.Hour))),
		}
		for j := range r.IntN(5) {
			d := ledger.Vector{float64(1 + r.IntN(8)), float64(1 + r.IntN(32)), 0}
			if r.IntN(5) == 0 {
				d[2] = 1
			}
			a.Queue = append(a.Queue, Job{ID: uint64(100*i + j), Demand: d, FirstIndex: r.IntN(3), Pending: r.IntN(30)})
		}
		v.Accounts = append(v.Accounts, a)
	}
	return v
}

// applyPass checks every placement against the view's capacity and returns
// the free vectors and each account's remaining queue after the pass.
func applyPass(t *testing.T, v *View, ps []Placement) ([]ledger.Vector, [][]Job) {
	t.Helper()
	free := make([]ledger.Vector, len(v.Nodes))
	for i, n := range v.Nodes {
		free[i] = n.Free.Clone()
	}
	queues := make([][]Job, len(v.Accounts))
	for i, a := range v.Accounts {
		queues[i] = append([]Job(nil), a.Queue...)
	}
	for _, p := range ps {
		job := &queues[p.Account][p.Job]
		if job.Pending == 0 || p.Task != job.FirstIndex {
			t.Fatalf("placement %+v is not the job's next pending task (job %+v)", p, *job)
		}
		for k := 0; k < p.Job; k++ {
			if q := queues[p.Account][k]; q.Pending > 0 && someNodeHolds(v, q.Demand) {
				t.Fatalf("placement %+v skips job %d of its account, which still has pending tasks and fits a node", p, k)
			}
		}
		if !free[p.Node].Fits(job.Demand) {
			t.Fatalf("placement %+v overcommits node %d: free %v, demand %v", p, p.Node, free[p.Node], job.Demand)
		}
		free[p.Node].Sub(job.Demand)
		job.Pending--
		job.FirstIndex++
	}
	return free, queues
}

func TestPassIsWorkConservingAndNeverOvercommits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	eng := NewEngine()
	for iter := range 300 {
		policy := Policies()[iter%len(Policies())]
		placement := []PlacementStrategy{Affinity, BestFit, Spread}[iter%3]
		v := randomView(r, policy, placement)
		ps, err := eng.Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		checkWorkConserving(t, iter, v, ps, func(a int, d ledger.Vector) bool {
			switch policy {
			case Static:
				return withinStaticShare(v, a, ps, d)
			case Fawkes:
				return withinFawkesPartition(v, a, ps, d)
			}
			return true
		})
	}
}

// someNodeHolds reports, by scanning every node, whether an idle node of
// the view could run a task of demand d: the jobs the engine may pass over
// are exactly those no node holds.
func someNodeHolds(v *View, d ledger.Vector) bool {
	for i := range v.Nodes {
		if v.Nodes[i].Capacity.Fits(d) {
			return true
		}
	}
	return false
}

// nextHoldable is the index of the first job of q with pending tasks that
// some node holds, or len(q): the job an account is served next.
func nextHoldable(v *View, q []Job) int {
	next := 0
	for next < len(q) && (q[next].Pending <= 0 || !someNodeHolds(v, q[next].Demand)) {
		next++
	}
	return next
}

// checkWorkConserving applies the pass ps to v (failing on any overcommit)
// and fails the test when an account's next task still fits a node after
// it. allowed, when not nil, says whether the policy lets account a run
// one more task of demand d at all.
func checkWorkConserving(t *testing.T, iter int, v *View, ps []Placement, allowed func(a int, d ledger.Vector) bool) {
	t.Helper()
	free, queues := applyPass(t, v, ps)
	for a, q := range queues {
		next := nextHoldable(v, q)
		if next == len(q) {
			continue
		}
		d := q[next].Demand
		if allowed != nil && !allowed(a, d) {
			continue
		}
		for n := range free {
			if free[n].Fits(d) {
				t.Fatalf("iteration %d (%s/%s): account %s's next task %v still fits node %d (free %v) after the pass",
					iter, v.Settings.Policy, v.Settings.Placement, v.Accounts[a].Name, d, n, free[n])
			}
		}
	}
}

// withinStaticShare recomputes, independently of the engine, whether one more
// task of demand d keeps account a inside its static partition.
func withinStaticShare(v *View, a int, ps []Placement, d ledger.Vector) bool {
	capacity := ledger.NewVector(len(v.Resources))
	total := 0.0
	for _, n := range v.Nodes {
		capacity.Add(n.Capacity)
	}
	for _, acct := range v.Accounts {
		total += acct.Weight
	}
	share := ledger.Share(capacity, v.Accounts[a].Weight, total)
	if total == 0 {
		share = ledger.Share(capacity, 1, float64(len(v.Accounts)))
	}
	held := v.Accounts[a].Running.Clone()
	for _, p := range ps {
		if p.Account == a {
			held.Add(v.Accounts[a].Queue[p.Job].Demand)
		}
	}
	held.Add(d)
	return share.Fits(held)
}

func TestPassIsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for iter := range 100 {
		v := randomView(r, Policies()[iter%len(Policies())], Affinity)
		first, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		first = append([]Placement(nil), first...)
		// A reused engine must give the same answer as a fresh one.
		eng := NewEngine()
		if _, err := eng.Schedule(randomView(r, HMRF, Spread)); err != nil {
			t.Fatal(err)
		}
		second, err := eng.Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, append([]Placement(nil), second...)) {
			t.Fatalf("iteration %d: same view, different placements", iter)
		}
	}
}

func TestStaticKeepsAccountsInTheirPartition(t *testing.T) {
	// Two equal accounts on 100 CPUs; only A has work. Under static A gets
	// its half and the other half stays idle; under hmrf A gets everything.
	v := func(p Policy) *View {
		return &View{
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{100}, Free: ledger.Vector{100}}},
			Accounts: []Account{
				{Name: "A", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{50},
					Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: 500}}},
				{Name: "B", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{0}},
			},
			Settings: Settings{Policy: p, Quantum: time.Minute, Placement: Affinity},
		}
	}
	for p, want := range map[Policy]int{Static: 50, HMRF: 100, DRF: 100} {
		ps, err := NewEngine().Schedule(v(p))
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != want {
			t.Errorf("%s placed %d tasks of a lone backlogged account, want %d", p, len(ps), want)
		}
	}
}

func TestStarvingAccountGoesFirst(t *testing.T) {
	// B has far more history than A, so every policy prefers A — until B has
	// waited past the time-out.
	mk := func(timeout time.Duration) *View {
		now := ledger.Time(10 * time.Hour)
		return &View{
			Now:       now,
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{1}, Free: ledger.Vector{1}}},
			Accounts: []Account{
				{Name: "A", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{1},
					WaitingSince: now - ledger.Time(time.Minute), Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: 1}}},
				{Name: "B", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{1e6}, Baseline: ledger.Vector{1}, BaselineRate: ledger.Vector{1},
					WaitingSince: now - ledger.Time(2*time.Hour), Queue: []Job{{ID: 2, Demand: ledger.Vector{1}, Pending: 1}}},
			},
			Settings: Settings{Policy: HMRF, Quantum: time.Minute, Placement: Affinity, Timeout: timeout},
		}
	}
	for timeout, want := range map[time.Duration]int{0: 0, time.Hour: 1, 3 * time.Hour: 0} {
		ps, err := NewEngine().Schedule(mk(timeout))
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Account != want {
			t.Errorf("time-out %v: placements %+v, want the single slot to go to account %d", timeout, ps, want)
		}
	}
}

func TestBadViewIsRefusedWithAClearError(t *testing.T) {
	good := func() *View {
		return &View{
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{8}, Free: ledger.Vector{8}}},
			Accounts: []Account{{Name: "A", Weight: 1, Running: ledger.Vector{0}, Usage: ledger.Vector{0}, Baseline: ledger.Vector{0}, BaselineRate: ledger.Vector{0},
				Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: 1}}}},
			Settings: DefaultSettings(),
		}
	}
	cases := map[string]func(v *View){
		"unknown policy":      func(v *View) { v.Settings.Policy = "fifo" },
		"zero quantum":        func(v *View) { v.Settings.Quantum = 0 },
		"short demand":        func(v *View) { v.Accounts[0].Queue[0].Demand = ledger.Vector{} },
		"negative free":       func(v *View) { v.Nodes[0].Free = ledger.Vector{-1} },
		"negative weight":     func(v *View) { v.Accounts[0].Weight = -1 },
		"unknown placement":   func(v *View) { v.Settings.Placement = "random" },
		"ltrf resource range": func(v *View) { v.Settings.Policy, v.Settings.LTRFResource = LTRF, 3 },
	}
	for name, spoil := range cases {
		v := good()
		spoil(v)
		if _, err := NewEngine().Schedule(v); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: empty error", name)
		}
	}
	if _, err := NewEngine().Schedule(good()); err != nil {
		t.Fatalf("the unspoiled view is refused: %v", err)
	}
}

func TestTiesGoToTheAccountListedFirstEvenAfterUpdates(t *testing.T) {
	// Two identical accounts and three slots: A, then B, then — tied again —
	// A. Every pass must break ties by view order, not by heap history.
	zero := ledger.Vector{0}
	for _, p := range []Policy{DRF, AF, LTDRF, LTAF, HMRF, LTRF} {
		v := &View{
			Resources: []string{"cpu"},
			Nodes:     []Node{{ID: "n", Capacity: ledger.Vector{3}, Free: ledger.Vector{3}}},
			Settings:  Settings{Policy: p, Quantum: time.Minute, Placement: Affinity},
		}
		for _, name := range []string{"A", "B"} {
			v.Accounts = append(v.Accounts, Account{Name: name, Weight: 1, Running: zero, Usage: zero, Baseline: zero,
				BaselineRate: ledger.Vector{1.5}, Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: 5}}})
		}
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, pl := range ps {
			got = append(got, v.Accounts[pl.Account].Name)
		}
		if strings.Join(got, "") != "ABA" {
			t.Errorf("%s: served %v, want A B A (ties to the account listed first)", p, got)
		}
	}
}
