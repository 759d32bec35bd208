package server

import (
	"context"
	"math"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// groupsService implements longfairv1.GroupsServer: the account tree.
type groupsService struct {
	longfairv1.UnimplementedGroupsServer
	s *Server
}

func groupProto(g fsm.GroupInfo) *longfairv1.Group {
	return &longfairv1.Group{Path: g.Path, Weight: g.Weight, Accounts: g.Accounts, Groups: g.Groups, CreatedAt: timestamp(g.CreatedAt)}
}

func (g *groupsService) SetGroupWeight(ctx context.Context, req *longfairv1.SetGroupWeightRequest) (*longfairv1.Group, error) {
	info, err := proposeFor[fsm.GroupInfo](ctx, g.s, &fsm.SetGroupWeight{Path: req.GetPath(), Weight: req.GetWeight()})
	if err != nil {
		return nil, err
	}
	return groupProto(info), nil
}

func (g *groupsService) RemoveGroup(ctx context.Context, req *longfairv1.RemoveGroupRequest) (*longfairv1.Group, error) {
	info, err := proposeFor[fsm.GroupInfo](ctx, g.s, &fsm.RemoveGroup{Path: req.GetPath()})
	if err != nil {
		return nil, err
	}
	return groupProto(info), nil
}

func (g *groupsService) ListGroups(ctx context.Context, _ *longfairv1.ListGroupsRequest) (*longfairv1.ListGroupsResponse, error) {
	out := &longfairv1.ListGroupsResponse{}
	for _, info := range g.s.fsm.Groups() {
		out.Groups = append(out.Groups, groupProto(info))
	}
	return out, nil
}

func (g *groupsService) SetAccountGroup(ctx context.Context, req *longfairv1.SetAccountGroupRequest) (*longfairv1.Account, error) {
	info, err := proposeFor[fsm.AccountInfo](ctx, g.s, &fsm.SetAccountGroup{Account: req.GetAccount(), Group: req.GetGroup()})
	if err != nil {
		return nil, err
	}
	return accountProto(info), nil
}

func (g *groupsService) GetAccountTree(ctx context.Context, _ *longfairv1.GetAccountTreeRequest) (*longfairv1.AccountTree, error) {
	at := now()
	nodes, resources, err := g.s.fsm.AccountTree(at)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.AccountTree{At: timestamp(at), Policy: string(g.s.fsm.Settings().Policy)}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, treeNodeProto(n, resources))
	}
	return out, nil
}

func treeNodeProto(n sched.TreeNode, resources []string) *longfairv1.TreeNode {
	return &longfairv1.TreeNode{
		Path: n.Path, Name: n.Name, Depth: int32(n.Depth), IsAccount: n.Account >= 0, Weight: n.Weight, Share: n.Share,
		Running: namedVector(resources, n.Running), FairResource: namedVector(resources, n.FairResource),
		Fairness: finite(n.Fairness), DominantShare: finite(n.DominantShare),
	}
}

// namedVector turns a vector into a map over the resource names.
func namedVector(resources []string, v ledger.Vector) map[string]float64 {
	m := make(map[string]float64, len(resources))
	for k, name := range resources {
		if k < len(v) {
			m[name] = v[k]
		}
	}
	return m
}

// finite keeps infinities out of messages that JSON encodings must carry:
// a node that holds something of a resource it has no fair share of is
// "infinitely" over its share, shown as the largest float.
func finite(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 0):
		return math.Copysign(math.MaxFloat64, x)
	}
	return x
}

// queuesService implements longfairv1.QueuesServer: BPF latency queues.
type queuesService struct {
	longfairv1.UnimplementedQueuesServer
	s *Server
}

func queueClassProto(c sched.QueueClass) longfairv1.QueueClass {
	switch c {
	case sched.Hard:
		return longfairv1.QueueClass_QUEUE_CLASS_HARD
	case sched.Soft:
		return longfairv1.QueueClass_QUEUE_CLASS_SOFT
	case sched.Elastic:
		return longfairv1.QueueClass_QUEUE_CLASS_ELASTIC
	}
	return longfairv1.QueueClass_QUEUE_CLASS_UNSPECIFIED
}

func latencyQueueProto(q fsm.QueueInfo) *longfairv1.LatencyQueue {
	return &longfairv1.LatencyQueue{
		Account: q.Account, Start: timestamp(q.Start), Period: duration(q.Period), Deadline: duration(q.Deadline),
		Burst: q.Burst, Class: queueClassProto(q.Class), Reason: q.Reason, CreatedAt: timestamp(q.CreatedAt),
		BurstStart: timestamp(q.BurstStart), Used: q.Used,
	}
}

func (q *queuesService) CreateLatencyQueue(ctx context.Context, req *longfairv1.CreateLatencyQueueRequest) (*longfairv1.LatencyQueue, error) {
	info, err := proposeFor[fsm.QueueInfo](ctx, q.s, &fsm.CreateLatencyQueue{
		Account: req.GetAccount(), Start: ledgerTime(req.GetStart()), Period: req.GetPeriod().AsDuration(),
		Deadline: req.GetDeadline().AsDuration(), Burst: req.GetBurst(),
	})
	if err != nil {
		return nil, err
	}
	return latencyQueueProto(info), nil
}

func (q *queuesService) RemoveLatencyQueue(ctx context.Context, req *longfairv1.RemoveLatencyQueueRequest) (*longfairv1.LatencyQueue, error) {
	info, err := proposeFor[fsm.QueueInfo](ctx, q.s, &fsm.RemoveLatencyQueue{Account: req.GetAccount()})
	if err != nil {
		return nil, err
	}
	return latencyQueueProto(info), nil
}

func (q *queuesService) ListLatencyQueues(ctx context.Context, _ *longfairv1.ListLatencyQueuesRequest) (*longfairv1.ListLatencyQueuesResponse, error) {
	out := &longfairv1.ListLatencyQueuesResponse{}
	for _, info := range q.s.fsm.LatencyQueues(now()) {
		out.Queues = append(out.Queues, latencyQueueProto(info))
	}
	return out, nil
}
