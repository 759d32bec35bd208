package server

import (
	"context"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

func settingsProto(s fsm.SettingsInfo) *longfairv1.Settings {
	return &longfairv1.Settings{
		Policy: string(s.Policy), Window: s.Window.String(), Timeout: duration(s.Timeout),
		Placement: string(s.Placement), Backfill: string(s.Backfill), Quantum: duration(s.Quantum), LtrfResource: s.LTRFResource,
		BillingWeights: s.BillingWeights, BillingRule: s.BillingRule.String(), Resources: s.Resources,
		QknoblerRho: s.Sched.QKnoblerRho, Fawkes: fawkesSettingsProto(s.Sched.Fawkes),
	}
}

func (o *operatorService) GetSettings(ctx context.Context, _ *longfairv1.GetSettingsRequest) (*longfairv1.Settings, error) {
	return settingsProto(o.s.fsm.Settings()), nil
}

func (o *operatorService) UpdateSettings(ctx context.Context, req *longfairv1.UpdateSettingsRequest) (*longfairv1.Settings, error) {
	cmd := &fsm.UpdateSettings{
		Policy: req.Policy, Window: req.Window, Placement: req.Placement, Backfill: req.Backfill, LTRFResource: req.LtrfResource,
		BillingWeights: req.GetBillingWeights(), BillingRule: req.BillingRule, AddResources: req.GetAddResources(),
	}
	if req.Timeout != nil {
		d := req.GetTimeout().AsDuration()
		cmd.Timeout = &d
	}
	if req.Quantum != nil {
		d := req.GetQuantum().AsDuration()
		cmd.Quantum = &d
	}
	cmd.QKnoblerRho, cmd.Fawkes = req.QknoblerRho, fawkesUpdate(req.GetFawkes())
	info, err := proposeFor[fsm.SettingsInfo](ctx, o.s, cmd)
	if err != nil {
		return nil, err
	}
	return settingsProto(info), nil
}

func (o *operatorService) ListNodes(ctx context.Context, _ *longfairv1.ListNodesRequest) (*longfairv1.ListNodesResponse, error) {
	out := &longfairv1.ListNodesResponse{}
	for _, n := range o.s.fsm.Nodes() {
		node := &longfairv1.Node{
			Id: n.ID, Up: n.Up, Class: n.Class, Account: n.Account, Address: n.Address,
			Capacity: n.Capacity, Free: n.Free, RunningTasks: int64(n.Running), QueuedTasks: int64(n.Queued), Since: timestamp(n.Since),
			Confinement: n.Confinement,
		}
		for _, tr := range n.History {
			node.History = append(node.History, &longfairv1.NodeTransition{At: timestamp(tr.At), Up: tr.Up, LostTasks: int32(tr.Lost)})
		}
		out.Nodes = append(out.Nodes, node)
	}
	return out, nil
}
