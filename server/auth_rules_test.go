package server

import (
	"testing"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// A user token sees the tree's groups and its own accounts' leaves, and
// only its own latency queues.
func TestTreeAndQueueFiltersForUsers(t *testing.T) {
	u := &userScope{user: "ann", accounts: []string{"phys"}}
	tree := &longfairv1.AccountTree{Nodes: []*longfairv1.TreeNode{
		{Path: ""}, {Path: "science", Name: "science"},
		{Path: "science/phys", Name: "phys", IsAccount: true}, {Path: "science/chem", Name: "chem", IsAccount: true},
	}}
	rule, ok := ruleOf(apiPrefix + "Groups/GetAccountTree")
	if !ok || rule.access != accessUser {
		t.Fatalf("GetAccountTree rule %+v", rule)
	}
	rule.filter(u, tree)
	if len(tree.Nodes) != 3 || tree.Nodes[2].GetName() != "phys" {
		t.Fatalf("a user sees %v", tree.Nodes)
	}
	queues := &longfairv1.ListLatencyQueuesResponse{Queues: []*longfairv1.LatencyQueue{{Account: "chem"}, {Account: "phys"}}}
	rule, _ = ruleOf(apiPrefix + "Queues/ListLatencyQueues")
	rule.filter(u, queues)
	if len(queues.Queues) != 1 || queues.Queues[0].GetAccount() != "phys" {
		t.Fatalf("a user sees queues %v", queues.Queues)
	}
	for _, m := range []string{"Groups/SetGroupWeight", "Groups/RemoveGroup", "Groups/SetAccountGroup", "Queues/CreateLatencyQueue", "Queues/RemoveLatencyQueue"} {
		if rule, _ := ruleOf(apiPrefix + m); rule.access != accessAdmin {
			t.Errorf("%s is not admin-only", m)
		}
	}
}
