package server

import (
	"context"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// historyTiers pairs the API's resolutions with the FSM's tiers, finest
// first.
var historyTiers = []struct {
	api longfairv1.HistoryResolution
	fsm fsm.HistoryResolution
}{
	{longfairv1.HistoryResolution_HISTORY_RESOLUTION_MINUTE, fsm.HistoryMinute},
	{longfairv1.HistoryResolution_HISTORY_RESOLUTION_HOUR, fsm.HistoryHour},
	{longfairv1.HistoryResolution_HISTORY_RESOLUTION_DAY, fsm.HistoryDay},
}

func (f *fairnessService) GetFairnessHistory(ctx context.Context, req *longfairv1.GetFairnessHistoryRequest) (*longfairv1.FairnessHistory, error) {
	for _, a := range req.GetAccounts() {
		if _, err := f.s.fsm.Account(a); err != nil {
			return nil, err
		}
	}
	until := now()
	if req.GetUntil() != nil {
		until = ledgerTime(req.GetUntil())
	}
	// The tier asked for, or the finest whose span covers the range (the
	// coarsest when none does).
	tier := historyTiers[len(historyTiers)-1]
	for _, t := range historyTiers {
		step, slots, _ := fsm.HistoryStep(t.fsm)
		span := time.Duration(slots) * step
		if t.api == req.GetResolution() ||
			(req.GetResolution() == longfairv1.HistoryResolution_HISTORY_RESOLUTION_UNSPECIFIED &&
				(req.GetSince() == nil || until.Sub(ledgerTime(req.GetSince())) <= span)) {
			tier = t
			break
		}
	}
	step, slots, _ := fsm.HistoryStep(tier.fsm)
	since := until - ledger.Time(time.Duration(slots)*step)
	if req.GetSince() != nil {
		since = ledgerTime(req.GetSince())
	}
	samples, err := f.s.fsm.History(tier.fsm, since, until, req.GetAccounts())
	if err != nil {
		return nil, err
	}
	out := &longfairv1.FairnessHistory{Resolution: tier.api, Step: duration(step)}
	for _, s := range samples {
		named := func(v ledger.Vector) map[string]float64 {
			m := make(map[string]float64, len(s.Resources))
			for k, r := range s.Resources {
				if k < len(v) {
					m[r] = v[k]
				}
			}
			return m
		}
		sample := &longfairv1.FairnessSample{At: timestamp(s.At)}
		for _, p := range s.Accounts {
			sample.Accounts = append(sample.Accounts, &longfairv1.AccountSample{
				Account: p.Account, Beta: p.Beta, HasBeta: p.HasBeta,
				Usage: named(p.Usage), Baseline: named(p.Baseline), Share: named(p.Share),
				SuAvailableMicroSu: int64(p.Available), PendingTasks: p.Pending, RunningTasks: p.Running,
			})
		}
		out.Samples = append(out.Samples, sample)
	}
	return out, nil
}
