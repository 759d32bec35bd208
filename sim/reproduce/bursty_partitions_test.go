package reproduce

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
	"github.com/longfair/longfair/sim"
)

func TestFawkesTDHelpsTheMostLoadedPartition(t *testing.T) {
	// FAWKES §7.3: with three partitions of uneven, bursty load, TD
	// weighting lowers the most loaded partition's average job slowdown
	// against equal shares (the paper: about 25%), and running every
	// partition on its minimum share only (none) is far worse than both.
	x, err := RunFawkesExperiment(FawkesOptions{Seed: 1}, []fawkes.Weighting{fawkes.TD, fawkes.Equal, fawkes.None}, FawkesPaperConfig(), dffSettings())
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Workload.Accounts[x.MostLoaded].Name; got != "c-2" {
		t.Fatalf("the most loaded partition is %s, want the bursty c-2", got)
	}
	td, eq, none := x.Run(fawkes.TD), x.Run(fawkes.Equal), x.Run(fawkes.None)
	s := func(r *sim.Result) float64 { return r.Accounts[x.MostLoaded].MeanSlowdown }
	change := (s(td) - s(eq)) / s(eq)
	t.Logf("c-2 mean slowdown: td %.2f, eq %.2f (%+.1f%%), none %.2f; resizes td %d/%d", s(td), s(eq), 100*change, s(none), td.Fawkes.Resizes, len(td.Fawkes.Ticks))
	if change > -0.10 {
		t.Errorf("TD changed c-2's mean slowdown by %+.1f%% against equal shares, want a clear drop (the paper saw about −25%%)", 100*change)
	}
	if s(none) <= s(eq) {
		t.Errorf("minimum shares only: c-2 slowdown %.2f, not worse than equal shares' %.2f", s(none), s(eq))
	}
	if n := td.Fawkes.Resizes; n == 0 || n == len(td.Fawkes.Ticks) {
		t.Errorf("TD resized at %d of %d intervals: with τ the partitions should change at some intervals and not others", n, len(td.Fawkes.Ticks))
	}
	var b strings.Builder
	if err := WriteFawkesTable(&b, x); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c-2 vs eq", "td", "Var(D)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFawkesWeightingPolicies(t *testing.T) {
	// FAWKES §7.3 on WKLD-D, every weighting: the demand-based policies
	// balance best, finer demand better (TD at least as good as JD), and
	// the performance-based policies do not beat TD; all three demand-based
	// policies beat equal shares for the most loaded partition.
	// go test ./sim -run TestFawkesWeightingPolicies -v prints the table.
	x, err := RunFawkesExperiment(FawkesOptions{Seed: 1}, nil, FawkesPaperConfig(), dffSettings())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteFawkesTable(&b, x); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	s := func(w fawkes.Weighting) float64 { return x.Run(w).Accounts[x.MostLoaded].MeanSlowdown }
	for _, w := range []fawkes.Weighting{fawkes.TD, fawkes.DD, fawkes.JD} {
		if s(w) >= s(fawkes.Equal) {
			t.Errorf("%s: c-2 slowdown %.2f, not below equal shares' %.2f", w, s(w), s(fawkes.Equal))
		}
	}
	if s(fawkes.TD) > s(fawkes.JD) {
		t.Errorf("TD (tasks) gave c-2 slowdown %.2f, worse than JD (jobs) %.2f: finer demand should balance better", s(fawkes.TD), s(fawkes.JD))
	}
	for _, w := range []fawkes.Weighting{fawkes.JS, fawkes.JT, fawkes.TT} {
		if s(w) < s(fawkes.TD) {
			t.Errorf("%s: c-2 slowdown %.2f, better than TD's %.2f; the paper found the performance-based policies no better", w, s(w), s(fawkes.TD))
		}
	}
}

// smallWorkload is a random workload of a few accounts (one of them,
// sometimes, without weight) on two nodes; every task fits a node.
func smallWorkload(r *rand.Rand) *sim.Workload {
	w := &sim.Workload{Name: "small", Resources: []string{"cpu", "mem"}}
	w.Nodes = []sim.Node{{ID: "a", Capacity: ledger.Vector{8, 16}}, {ID: "b", Capacity: ledger.Vector{4, 32}}}
	for i := range 2 + r.IntN(3) {
		w.Accounts = append(w.Accounts, sim.Account{Name: string(rune('A' + i)), Weight: float64(r.IntN(4))})
	}
	for i := range 5 + r.IntN(20) {
		w.Jobs = append(w.Jobs, sim.Job{
			ID: uint64(i + 1), Account: r.IntN(len(w.Accounts)),
			Submit:  ledger.Time(time.Duration(r.IntN(600)) * time.Second),
			Demand:  ledger.Vector{float64(1 + r.IntN(4)), float64(1 + r.IntN(8))},
			Tasks:   1 + r.IntN(10),
			Runtime: time.Duration(1+r.IntN(120)) * time.Second,
		})
	}
	return w
}

func TestDiscriminationAgreesWithAStepByStepReference(t *testing.T) {
	// Recompute D_i from the replay's own trace, segment by segment: the
	// accounts with unfinished tasks share the cluster by weight (equally
	// when none has a weight), and each holds what its started, unended
	// tasks demand.
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 60 {
		w := smallWorkload(r)
		policy := []sched.Policy{sched.DRF, sched.Static, sched.HDRF, sched.HMRF}[iter%4]
		n := len(w.Accounts)
		unfinished := make([]int, n)
		held := make([]ledger.Vector, n)
		for a := range held {
			held[a] = ledger.NewVector(2)
		}
		capacity := w.Capacity()
		want := make([]float64, n)
		var last ledger.Time
		everActive := make([]bool, n)
		integrate := func(until ledger.Time) {
			dt := until.Sub(last).Seconds()
			if dt <= 0 {
				return
			}
			total, active := 0.0, 0
			for a := range n {
				if unfinished[a] > 0 {
					total += w.Accounts[a].Weight
					active++
				}
			}
			for a := range n {
				everActive[a] = everActive[a] || unfinished[a] > 0
				c := fawkes.Held(held[a], capacity)
				due := 0.0
				switch {
				case unfinished[a] == 0:
				case total > 0:
					due = w.Accounts[a].Weight / total
				default:
					due = 1 / float64(active)
				}
				want[a] += (c - due) * dt
			}
			last = until
		}
		cfg := sim.Config{Settings: sched.Settings{Policy: policy, Quantum: time.Minute, Placement: sched.Affinity}}
		var events []sim.TraceEvent
		cfg.Trace = func(e sim.TraceEvent) { events = append(events, e) }
		res, err := sim.Run(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		never := map[int]bool{} // jobs that can never run never join a queue
		for _, u := range res.Unschedulable {
			never[u.Job] = true
		}
		for _, e := range events {
			integrate(e.Time)
			job := &w.Jobs[e.Job]
			switch {
			case e.Kind == sim.Arrive && !never[e.Job]:
				unfinished[job.Account] += job.Tasks
			case e.Kind == sim.Start:
				held[job.Account].AddScaled(job.Demand, float64(e.Tasks))
			case e.Kind == sim.End:
				held[job.Account].AddScaled(job.Demand, -float64(e.Tasks))
				unfinished[job.Account] -= e.Tasks
			}
		}
		integrate(res.End)
		var ever []float64
		for a := range n {
			if got := res.Accounts[a].Discrimination; math.Abs(got-want[a]) > 1e-6*(1+math.Abs(want[a])) {
				t.Fatalf("iteration %d (%s): account %d's D = %v, reference %v", iter, policy, a, got, want)
			}
			if everActive[a] {
				ever = append(ever, want[a])
			}
		}
		if v := fawkes.Variance(ever); math.Abs(res.DiscriminationVariance-v) > 1e-6*(1+v) {
			t.Fatalf("iteration %d: Var(D) %v, reference %v", iter, res.DiscriminationVariance, v)
		}
	}
}

func TestFawkesReplayKeepsAccountsInTheirPartitions(t *testing.T) {
	// Every task starts inside its account's partition as FAWKES set it
	// at that time, whichever weighting sets it.
	r := rand.New(rand.NewPCG(5, 8))
	for iter := range 40 {
		w := smallWorkload(r)
		for a := range w.Accounts {
			w.Accounts[a].Weight++
		}
		wt := fawkes.Weightings()[iter%len(fawkes.Weightings())]
		if wt == fawkes.None {
			wt = fawkes.JD
		}
		n := len(w.Accounts)
		type start struct {
			at      ledger.Time
			account int
			held    ledger.Vector
			idle    ledger.Vector // the task's demand when the account held nothing before this time's starts
		}
		var starts []start
		held := make([]ledger.Vector, n)
		idleAt := make([]ledger.Time, n)
		wasIdle := make([]bool, n)
		for a := range held {
			held[a] = ledger.NewVector(2)
			idleAt[a] = -1
		}
		cfg := sim.Config{Settings: sched.Settings{Policy: sched.Fawkes, Quantum: time.Minute, Placement: sched.Spread,
			Fawkes: fawkes.Config{Weighting: wt, Interval: time.Minute, Guarantee: 0.5}}}
		cfg.Trace = func(e sim.TraceEvent) {
			job := &w.Jobs[e.Job]
			switch e.Kind {
			case sim.Start:
				if idleAt[job.Account] != e.Time {
					idleAt[job.Account], wasIdle[job.Account] = e.Time, held[job.Account].Sum() == 0
				}
				held[job.Account].AddScaled(job.Demand, float64(e.Tasks))
				s := start{at: e.Time, account: job.Account, held: held[job.Account].Clone()}
				if wasIdle[job.Account] {
					s.idle = job.Demand // an idle account may start one task of any size
				}
				starts = append(starts, s)
			case sim.End:
				held[job.Account].AddScaled(job.Demand, -float64(e.Tasks))
			}
		}
		res, err := sim.Run(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.UnfinishedTasks != 0 {
			t.Fatalf("iteration %d (%s): %d tasks never ran", iter, wt, res.UnfinishedTasks)
		}
		capacity := w.Capacity()
		for _, s := range starts {
			// The share before any change at this time, and after it: a
			// task started at the time of a change ran under one of them.
			allowed := 0.0
			for _, p := range res.Fawkes.Partitions {
				if p.Time < s.at {
					allowed = p.Shares[s.account]
				} else if p.Time == s.at {
					allowed = math.Max(allowed, p.Shares[s.account])
				}
			}
			for j := range capacity {
				limit := allowed * capacity[j]
				if s.idle != nil {
					limit = math.Max(limit, s.idle[j])
				}
				if s.held[j] > limit+1e-9 {
					t.Fatalf("iteration %d (%s): at %v account %d holds %v, beyond its share %.3f of %v", iter, wt, s.at, s.account, s.held, allowed, capacity)
				}
			}
		}
	}
}
