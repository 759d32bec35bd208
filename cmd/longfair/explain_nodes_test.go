package main

import (
	"strings"
	"testing"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// explainNodesFor runs explainNodes for a job of demand on nodes and
// returns its one reason.
func explainNodesFor(t *testing.T, demand map[string]float64, nodes []*longfairv1.Node) reason {
	t.Helper()
	job := &longfairv1.Job{Id: 7, Account: "bio", Demand: demand, Tasks: 1, PendingTasks: 1}
	e := &explanation{Job: job, Account: "bio"}
	explainNodes(e, job, nodes, upShapes(nodes, demand))
	if len(e.Reasons) != 1 {
		t.Fatalf("explainNodes gave %d reasons: %+v", len(e.Reasons), e.Reasons)
	}
	return e.Reasons[0]
}

// A job no up node can hold is told so, with what is too large and the
// largest up shape, and that it does not hold back the account's later
// jobs; a node that is down does not count. A job that fits an idle node
// but not what is free waits for resources.
func TestExplainSaysWhatNoUpNodeCanHold(t *testing.T) {
	const gib = 1 << 30
	idle := func(id string, up bool, capacity map[string]float64) *longfairv1.Node {
		return &longfairv1.Node{Id: id, Up: up, Capacity: capacity, Free: capacity}
	}
	nodes := []*longfairv1.Node{
		idle("cpu-1", true, map[string]float64{"cpu": 4, "mem": 8 * gib}),
		idle("mic-1", true, map[string]float64{"cpu": 4, "mem": 8 * gib, "mic": 2}),
		idle("fat-1", false, map[string]float64{"cpu": 64, "mem": 256 * gib}),
	}
	for _, c := range []struct {
		demand map[string]float64
		want   []string
	}{
		{map[string]float64{"cpu": 5}, []string{"no up node can hold cpu=5:", "the largest up node has cpu=4 mem=8G mic=2", "does not hold back bio's later jobs"}},
		{map[string]float64{"cpu": 1, "mic": 100}, []string{"no up node can hold mic=100:", "cpu=4 mem=8G mic=2"}},
		{map[string]float64{"cpu": 1, "gpu": 1}, []string{"no up node can hold gpu=1 (none has any gpu)"}},
	} {
		r := explainNodesFor(t, c.demand, nodes)
		for _, w := range c.want {
			if r.Kind != "resources" || !strings.Contains(r.Text, w) {
				t.Errorf("demand %v: reason %s: %q, want it to say %q", c.demand, r.Kind, r.Text, w)
			}
		}
	}
	nodes[1].Free = map[string]float64{"cpu": 1, "mem": 8 * gib, "mic": 2}
	nodes[0].Free = map[string]float64{"cpu": 0, "mem": 8 * gib}
	if r := explainNodesFor(t, map[string]float64{"cpu": 4}, nodes); !strings.Contains(r.Text, "waiting for resources") {
		t.Errorf("a job that fits an idle node: %q, want it to wait for resources", r.Text)
	}
	up := upShapes(nodes, map[string]float64{"cpu": 1})
	for demand, want := range map[string]bool{"cpu=4,mic=2": true, "cpu=5": false, "gpu=1": false} {
		d, err := client.ParseResources(demand)
		if err != nil {
			t.Fatal(err)
		}
		if got := up.holds(d); got != want {
			t.Errorf("up nodes hold %s: %v, want %v", demand, got, want)
		}
	}
}
