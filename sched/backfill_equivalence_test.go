package sched

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// The backfill's speed-ups must not change a placement. The tests here
// run the engine against a straightforward version of each part made
// faster, pass after pass on one engine (as the simulator does, so what
// the index keeps between passes counts too), on random views with
// running tasks' releases, parallel and exclusive jobs, under every
// policy, strategy and reservation count.

// backfillSequenceView is a random view for a sequence of backfill passes:
// gangView's nodes and jobs, some jobs exclusive, every node's used
// resources coming back in up to 3 releases, walltimes from none to two
// hours, and EASY or conservative backfill with 1 to 4 reservations.
func backfillSequenceView(r *rand.Rand, iter int) *View {
	v := backfillGangView(r, iter)
	for i := range v.Nodes {
		if r.IntN(4) == 0 {
			v.Nodes[i].Free = v.Nodes[i].Capacity.Clone()
		}
		listReleases(r, &v.Nodes[i], v.Now)
	}
	for a := range v.Accounts {
		for j := range v.Accounts[a].Queue {
			job := &v.Accounts[a].Queue[j]
			job.Walltime = time.Duration(r.IntN(3)) * time.Duration(1+r.IntN(7200)) * time.Second
			if r.IntN(8) == 0 {
				job.Demand, job.PerNode, job.Nodes = v.Nodes[r.IntN(len(v.Nodes))].Capacity.Clone(), nil, 0
				job.Exclusive = true
				if nodes := 1 + r.IntN(3); nodes > 1 {
					spanNodes(job, nodes)
				}
			}
		}
	}
	return v
}

// advanceView starts the pass's placements in v (their nodes' free
// resources taken, a release listed for each that has a walltime), then
// moves the clock on by up to an hour and ends the tasks whose release
// is due, but for one in four, which runs on past its walltime (its
// release stays listed, before now).
func advanceView(r *rand.Rand, v *View, ps []Placement) {
	for _, p := range ps {
		job := &v.Accounts[p.Account].Queue[p.Job]
		d := job.nodeDemand()
		nodes := p.Nodes
		if nodes == nil {
			nodes = []int{p.Node}
		}
		for _, n := range nodes {
			nd := &v.Nodes[n]
			nd.Free = nd.Free.Clone()
			nd.Free.Sub(d)
			for k := range nd.Free {
				nd.Free[k] = max(nd.Free[k], 0)
			}
			if job.Walltime > 0 {
				nd.Releases = append(nd.Releases, Release{At: v.Now.Add(job.Walltime), Free: d})
			}
		}
		job.Pending--
		job.FirstIndex++
	}
	v.Now = v.Now.Add(time.Duration(r.IntN(3600)) * time.Second)
	for i := range v.Nodes {
		nd := &v.Nodes[i]
		kept := nd.Releases[:0:0]
		for _, rel := range nd.Releases {
			if rel.At > v.Now || r.IntN(4) == 0 {
				kept = append(kept, rel)
				continue
			}
			nd.Free = nd.Free.Clone()
			nd.Free.Add(rel.Free)
			for k := range nd.Free {
				nd.Free[k] = min(nd.Free[k], nd.Capacity[k])
			}
		}
		nd.Releases = kept
	}
}

// comparePassSequences runs passes over a sequence of random views on
// two engines, want set up by reference to take the straightforward
// paths, and fails at the first pass where their placements or
// reservations differ. It returns how many passes reserved.
func comparePassSequences(t *testing.T, seed uint64, iters int, reference func(*Engine)) int {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	reserved := 0
	for iter := range iters {
		v := backfillSequenceView(r, iter)
		got, want := NewEngine(), NewEngine()
		reference(want)
		for pass := range 6 {
			wantPs, err := want.Schedule(v)
			if err != nil {
				t.Fatalf("iteration %d pass %d (%s, %s): %v", iter, pass, v.Settings.Policy, v.Settings.Backfill, err)
			}
			wantPs = slices.Clone(wantPs)
			wantRes := want.LastReservations(nil)
			gotPs, err := got.Schedule(v)
			if err != nil {
				t.Fatalf("iteration %d pass %d: %v", iter, pass, err)
			}
			if gotRes := got.LastReservations(nil); !reflect.DeepEqual(gotPs, wantPs) || !reflect.DeepEqual(gotRes, wantRes) {
				t.Fatalf("iteration %d pass %d (%s, %s, %d reservations): placed %v reserving %v; the reference placed %v reserving %v",
					iter, pass, v.Settings.Policy, v.Settings.Backfill, v.Settings.Reservations, gotPs, gotRes, wantPs, wantRes)
			}
			if len(wantRes) > 0 {
				reserved++
			}
			advanceView(r, v, wantPs)
		}
	}
	return reserved
}

// Masks written into the index only when a search needs them
// (backfill_masks.go), counts of the nodes that hold a demand remembered
// (backfill_counts.go) and a gang's nodes set to what they keep as they
// are chosen (claimFree) place exactly as the straightforward paths.
func TestBackfillPlacesAsTheStraightforwardPaths(t *testing.T) {
	reserved := comparePassSequences(t, 41, 600, func(e *Engine) { e.resv.straight = true })
	if reserved < 500 {
		t.Fatalf("only %d passes reserved: backfill was barely exercised", reserved)
	}
}
