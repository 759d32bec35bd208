package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// TestExplainRankAgreesWithTheEngine builds random fairness states, asks
// the real policy engine which account it serves first when there is room
// for exactly one task, and checks that explain ranks that account first.
func TestExplainRankAgreesWithTheEngine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	resources := []string{"cpu", "mem", "mic"}
	capacity := ledger.Vector{64, 256 << 30, 4}
	demand := ledger.Vector{1, 1 << 30, 0}
	for _, policy := range []sched.Policy{sched.DRF, sched.AF, sched.LTDRF, sched.LTAF, sched.LTRF, sched.HMRF} {
		for trial := range 200 {
			n := 2 + rng.IntN(4)
			view := &sched.View{
				Now: ledger.Time(time.Hour), Resources: resources,
				// One task's room: the engine places exactly one task.
				Nodes:    []sched.Node{{ID: "n1", Capacity: capacity, Free: demand.Clone()}},
				Settings: sched.Settings{Policy: policy, Quantum: time.Nanosecond, Placement: place.BestFit},
			}
			report := &longfairv1.FairnessReport{Policy: string(policy), Capacity: map[string]float64{}}
			for j, r := range resources {
				report.Capacity[r] = capacity[j]
			}
			for i := range n {
				a := sched.Account{Name: string(rune('a' + i)), Weight: 0.5 + rng.Float64()*3,
					Running: make(ledger.Vector, 3), Usage: make(ledger.Vector, 3), Baseline: make(ledger.Vector, 3),
					BaselineRate: make(ledger.Vector, 3),
					Queue:        []sched.Job{{ID: uint64(i + 1), Demand: demand, Pending: 1, Walltime: time.Minute}}}
				for j := range capacity {
					a.Running[j] = math.Floor(rng.Float64() * capacity[j] / float64(n))
					a.Usage[j] = rng.Float64() * capacity[j] * 3600
					if rng.IntN(3) > 0 {
						a.Baseline[j] = rng.Float64() * capacity[j] * 3600
					}
				}
				view.Accounts = append(view.Accounts, a)
				row := &longfairv1.AccountFairness{Account: a.Name, Weight: a.Weight, PendingTasks: 1,
					Usage: named(resources, a.Usage), Baseline: named(resources, a.Baseline), Allocation: named(resources, a.Running),
					Waiting: durationpb.New(0)}
				if beta := ledger.Beta(a.Usage, a.Baseline); !math.IsInf(beta, 1) {
					row.Beta, row.HasBeta = beta, true
				}
				report.Accounts = append(report.Accounts, row)
			}
			placed, err := sched.NewEngine().Schedule(view)
			if err != nil {
				t.Fatal(err)
			}
			if len(placed) != 1 {
				t.Fatalf("%s trial %d: the engine placed %d tasks in room for one", policy, trial, len(placed))
			}
			first := view.Accounts[placed[0].Account].Name
			e := &explanation{Account: first}
			explainRank(e, &longfairv1.Settings{Policy: string(policy), LtrfResource: "cpu"}, report)
			if e.Rank != 1 {
				t.Fatalf("%s trial %d: the engine served %s first, explain ranks it %d of %d", policy, trial, first, e.Rank, e.Ranked)
			}
		}
	}
}

func named(resources []string, v ledger.Vector) map[string]float64 {
	out := make(map[string]float64, len(v))
	for j, r := range resources {
		out[r] = v[j]
	}
	return out
}
