package sched

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// backfillCase: four 4-core nodes; nodes 0 and 1 are busy until now+100s.
// The wide account (no usage, ranked first) wants all four nodes; the
// narrow account has 1-core tasks that end in 50s and others in 200s.
func backfillCase(mode Backfill) *View {
	now := ledger.Time(1_000 * time.Second)
	busy := func(id string) Node {
		return Node{ID: id, Capacity: ledger.Vector{4}, Free: ledger.Vector{0},
			Releases: []Release{{At: now.Add(100 * time.Second), Free: ledger.Vector{4}}}}
	}
	idle := func(id string) Node { return Node{ID: id, Capacity: ledger.Vector{4}, Free: ledger.Vector{4}} }
	zero := ledger.Vector{0}
	return &View{
		Now: now, Resources: []string{"cpu"},
		Settings: Settings{Policy: DRF, Quantum: time.Minute, Placement: BestFit, Backfill: mode},
		Nodes:    []Node{busy("a"), busy("b"), idle("c"), idle("d")},
		Accounts: []Account{
			{Name: "wide", Weight: 1, Running: zero, Usage: zero, Baseline: zero, BaselineRate: zero,
				Queue: []Job{{ID: 1, Nodes: 4, PerNode: ledger.Vector{4}, Demand: ledger.Vector{16}, Pending: 1, Walltime: time.Hour}}},
			{Name: "narrow", Weight: 1, Running: ledger.Vector{8}, Usage: zero, Baseline: zero, BaselineRate: zero,
				Queue: []Job{
					{ID: 2, Demand: ledger.Vector{1}, Pending: 6, Walltime: 50 * time.Second},
					{ID: 3, Demand: ledger.Vector{1}, Pending: 6, Walltime: 200 * time.Second},
				}},
		},
	}
}

// On the scripted case, greedy filling gives the idle nodes to the narrow
// account's tasks, long ones included, and reserves nothing; without
// backfill nothing starts after the 4-node job. With EASY
// the 4-node job is reserved at now+100s on all four nodes, and only
// tasks that end before then start: the six 50-second ones, not the
// 200-second ones (which would delay it).
func TestBackfillReservesForTheFirstRankedJob(t *testing.T) {
	e := NewEngine()
	ps, err := e.Schedule(backfillCase(BackfillGreedy))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 8 {
		t.Fatalf("greedy: %d tasks started, want the 8 the idle nodes hold", len(ps))
	}
	if _, ok := e.LastReservation(); ok {
		t.Fatal("a greedy pass reserved")
	}
	if ps, err = e.Schedule(backfillCase(BackfillNone)); err != nil || len(ps) != 0 {
		t.Fatalf("without backfill: %d tasks started (%v), want none after the 4-node job that cannot", len(ps), err)
	}

	v := backfillCase(BackfillEASY)
	ps, err = e.Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := e.LastReservation()
	if !ok || r.Account != 0 || r.At != v.Now.Add(100*time.Second) || !slices.Equal(r.Nodes, []int{0, 1, 2, 3}) {
		t.Fatalf("reservation %+v (made %v), want the wide job at now+100s on all four nodes", r, ok)
	}
	short := 0
	for _, p := range ps {
		job := v.Accounts[p.Account].Queue[p.Job]
		if job.Walltime > 100*time.Second {
			t.Fatalf("task of job %d (walltime %v) started and would delay the reservation at +100s", job.ID, job.Walltime)
		}
		short++
	}
	if short != 6 {
		t.Fatalf("%d short tasks backfilled, want all 6 (the idle nodes hold 8)", short)
	}
}

// A property: on random views with running tasks' releases, random
// walltimes and parallel jobs, under every policy, the pass's placements
// never delay its reservation — at the reserved time every reserved node
// has the reserved job's per-node demand free, counting the releases up
// to then and every task the pass placed that may still run.
//
// Under conservative backfill every one of the K reservations is kept so,
// and no reservation holds a node while an earlier reserved job may.
func TestBackfillNeverDelaysTheReservation(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	reserved, several, shared := 0, 0, 0
	for iter := range 1200 {
		v := backfillGangView(r, iter)
		policy := v.Settings.Policy
		for i := range v.Nodes {
			listReleases(r, &v.Nodes[i], v.Now)
		}
		for a := range v.Accounts {
			for j := range v.Accounts[a].Queue {
				v.Accounts[a].Queue[j].Walltime = time.Duration(r.IntN(3)) * time.Duration(1+r.IntN(7200)) * time.Second
			}
		}
		e := NewEngine()
		ps, err := e.Schedule(v)
		if err != nil {
			t.Fatalf("iteration %d (%s): %v", iter, policy, err)
		}
		all := e.LastReservations(nil)
		if len(all) == 0 {
			continue
		}
		reserved++
		if len(all) > 1 {
			several++
		}
		if want := v.Settings.reservationLimit(); len(all) > want {
			t.Fatalf("iteration %d: %d reservations, at most %d allowed", iter, len(all), want)
		}
		if first, _ := e.LastReservation(); first.Account != all[0].Account || first.Job != all[0].Job {
			t.Fatalf("iteration %d: LastReservation %+v is not the first of %+v", iter, first, all)
		}
		// A node in two reservations is the later one's only once the
		// earlier reserved job has ended.
		busyUntil := map[int]ledger.Time{}
		for _, res := range all {
			wall := v.Accounts[res.Account].Queue[res.Job].Walltime
			for _, n := range res.Nodes {
				until, held := busyUntil[n]
				if held && (until < 0 || res.At < until) {
					t.Fatalf("iteration %d: node %d is reserved at %v while an earlier reserved job holds it until %v: %+v", iter, n, res.At, until, all)
				}
				if held {
					shared++
				}
				busyUntil[n] = res.At.Add(wall)
				if wall <= 0 {
					busyUntil[n] = -1
				}
			}
			checkReservationKept(t, iter, v, ps, res)
		}
	}
	if reserved < 100 || several < 30 {
		t.Fatalf("only %d of 1200 passes reserved, %d more than once: the property was barely exercised", reserved, several)
	}
	t.Logf("%d passes reserved, %d more than once; %d nodes held by two reservations in turn", reserved, several, shared)
}

// backfillGangView is gangView under iteration iter's policy and
// placement strategy, with EASY backfill, or on odd iterations
// conservative backfill with 1 to 4 reservations.
func backfillGangView(r *rand.Rand, iter int) *View {
	v := gangView(r, Policies()[iter%len(Policies())], []PlacementStrategy{Affinity, BestFit, Spread}[iter%3])
	v.Settings.Backfill = BackfillEASY
	if iter%2 == 1 {
		v.Settings.Backfill, v.Settings.Reservations = BackfillConservative, 1+r.IntN(4)
	}
	return v
}

// listReleases lists what node nd has in use coming back in up to 3
// releases, within two hours of now.
func listReleases(r *rand.Rand, nd *Node, now ledger.Time) {
	used := nd.Capacity.Clone()
	used.Sub(nd.Free)
	for range 1 + r.IntN(3) {
		part := used.Clone()
		for k := range part {
			part[k] = float64(r.IntN(int(used[k]) + 1))
		}
		used.Sub(part)
		nd.Releases = append(nd.Releases, Release{At: now.Add(time.Duration(r.IntN(7200)) * time.Second), Free: part})
	}
}

// checkReservationKept fails the test unless every node of res has the
// reserved job's per-node demand free at res.At, counting the releases up
// to then and every task of ps that may still run.
func checkReservationKept(t *testing.T, iter int, v *View, ps []Placement, res Reservation) {
	t.Helper()
	policy, placement := v.Settings.Policy, v.Settings.Placement
	{
		job := &v.Accounts[res.Account].Queue[res.Job]
		d := job.nodeDemand()
		for _, n := range res.Nodes {
			free := v.Nodes[n].Free.Clone()
			for _, rel := range v.Nodes[n].Releases {
				if max(rel.At, v.Now) <= res.At {
					free.Add(rel.Free)
				}
			}
			for _, p := range ps {
				pj := &v.Accounts[p.Account].Queue[p.Job]
				nodes := p.Nodes
				if nodes == nil {
					nodes = []int{p.Node}
				}
				if !slices.Contains(nodes, n) {
					continue
				}
				if pj.Walltime > 0 && v.Now.Add(pj.Walltime) <= res.At {
					continue // ends before the reservation
				}
				free.Sub(pj.nodeDemand())
			}
			if !free.Fits(d) {
				t.Fatalf("iteration %d (%s/%s, %s): reserved node %d has %v free at the reservation %v, the job needs %v per node",
					iter, policy, placement, v.Settings.Backfill, n, free, res.At, d)
			}
		}
	}
}

// Explain tells the reserved job its reservation, and a job behind it the
// earliest time the nodes could hold it.
func TestExplainForecastsStarts(t *testing.T) {
	v := backfillCase(BackfillEASY)
	x, err := NewEngine().Explain(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Reserved || !x.HasForecast || x.Forecast != v.Now.Add(100*time.Second) || x.Nodes != 4 || x.Wait != WaitNoRoom {
		t.Fatalf("explain of the 4-node job: reserved %v, forecast %v (%v), nodes %d, wait %v; want reserved at now+100s on 4 nodes",
			x.Reserved, x.Forecast, x.HasForecast, x.Nodes, x.Wait)
	}
	// Without backfill nothing is reserved, but the forecast stands.
	v.Settings.Backfill = BackfillNone
	if x, err = NewEngine().Explain(v, 1); err != nil || x.Reserved || x.Forecast != v.Now.Add(100*time.Second) {
		t.Fatalf("without backfill: %+v, %v; want the same forecast, not reserved", x, err)
	}
	// A job whose nodes never free (no releases, a 5th node missing).
	v.Accounts[0].Queue[0].Nodes, v.Accounts[0].Queue[0].Demand = 5, ledger.Vector{20}
	if x, err = NewEngine().Explain(v, 1); err != nil || x.HasForecast || x.Wait != WaitNoNodeHolds {
		t.Fatalf("a 5-node job on 4 nodes: %+v, %v; want no forecast and no node that holds it", x, err)
	}
}

// Conservative backfill with K = 1 is EASY: the same placements and the
// same reservation, pass for pass.
func TestConservativeWithOneReservationIsEASY(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for iter := range 200 {
		v := gangView(r, Policies()[iter%len(Policies())], []PlacementStrategy{Affinity, BestFit, Spread}[iter%3])
		for i := range v.Nodes {
			used := v.Nodes[i].Capacity.Clone()
			used.Sub(v.Nodes[i].Free)
			v.Nodes[i].Releases = []Release{{At: v.Now.Add(time.Duration(r.IntN(7200)) * time.Second), Free: used}}
		}
		for a := range v.Accounts {
			for j := range v.Accounts[a].Queue {
				v.Accounts[a].Queue[j].Walltime = time.Duration(1+r.IntN(7200)) * time.Second
			}
		}
		run := func(b Backfill) ([]Placement, []Reservation) {
			v.Settings.Backfill, v.Settings.Reservations = b, 1
			e := NewEngine()
			ps, err := e.Schedule(v)
			if err != nil {
				t.Fatalf("iteration %d (%s): %v", iter, b, err)
			}
			return slices.Clone(ps), e.LastReservations(nil)
		}
		easyPs, easyRes := run(BackfillEASY)
		consPs, consRes := run(BackfillConservative)
		if !reflect.DeepEqual(easyPs, consPs) || !reflect.DeepEqual(easyRes, consRes) {
			t.Fatalf("iteration %d: easy placed %v reserving %v; conservative with K=1 placed %v reserving %v", iter, easyPs, easyRes, consPs, consRes)
		}
	}
}
