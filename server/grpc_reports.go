package server

import (
	"context"
	"encoding/json"
	"errors"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// fairnessService implements longfairv1.FairnessServer.
type fairnessService struct {
	longfairv1.UnimplementedFairnessServer
	s *Server
}

func (f *fairnessService) GetFairnessReport(ctx context.Context, req *longfairv1.GetFairnessReportRequest) (*longfairv1.FairnessReport, error) {
	r, err := f.s.fsm.Fairness(req.GetAccount(), now())
	if err != nil {
		return nil, err
	}
	out := &longfairv1.FairnessReport{At: timestamp(r.At), Policy: string(r.Policy), Window: r.Window.String(), Capacity: r.Capacity}
	for _, a := range r.Accounts {
		row := &longfairv1.AccountFairness{
			Account: a.Account, Weight: a.Weight, Share: a.Share, Usage: a.Usage, Baseline: a.Baseline,
			HasBeta: a.HasBeta, Allocation: a.Allocation, PendingTasks: a.Pending, RunningTasks: a.Running,
			SuAvailableMicroSu: int64(a.Available), Waiting: duration(a.Waiting),
			Group: a.Group, FawkesShare: a.FawkesShare,
		}
		if a.HasBeta {
			// +Inf does not survive JSON encodings of the message; has_beta
			// already says there is no sharing loss to make up.
			row.Beta = a.Beta
		}
		out.Accounts = append(out.Accounts, row)
	}
	return out, nil
}

// ledgerService implements longfairv1.LedgerServer.
type ledgerService struct {
	longfairv1.UnimplementedLedgerServer
	s *Server
}

func (l *ledgerService) GetBalance(ctx context.Context, req *longfairv1.GetBalanceRequest) (*longfairv1.Balance, error) {
	b, err := l.s.fsm.Balance(req.GetAccount(), now())
	if err != nil {
		return nil, err
	}
	return &longfairv1.Balance{
		Account: b.Account, GrantedMicroSu: int64(b.Granted), ChargedMicroSu: int64(b.Charged),
		HeldMicroSu: int64(b.Held), ExpiredMicroSu: int64(b.Expired), AvailableMicroSu: int64(b.Available),
	}, nil
}

// journalDetail is the part of a journal entry the API carries as JSON
// text: how a charge was computed and which grants funded it.
type journalDetail struct {
	HoldID    string              `json:"hold_id,omitempty"`
	Expires   ledger.Time         `json:"expires,omitempty"`
	Requested ledger.SU           `json:"requested,omitempty"`
	Funds     []ledger.Fund       `json:"funds,omitempty"`
	Charge    ledger.ChargeDetail `json:"charge,omitzero"`
}

func (l *ledgerService) ListJournal(ctx context.Context, req *longfairv1.ListJournalRequest) (*longfairv1.ListJournalResponse, error) {
	entries, next, err := l.s.fsm.Journal(req.GetAccount(), req.GetAfterSeq(), pageSize(req.GetPageSize()))
	if err != nil {
		return nil, err
	}
	var charges []string
	for _, e := range entries {
		if e.Kind == ledger.EntryCharge {
			charges = append(charges, e.ID)
		}
	}
	// The measurement lives on the attempt, not in the hashed entry: join
	// it here so the export shows requested vs used per charge line.
	used, err := l.s.fsm.ChargeUsage(charges)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListJournalResponse{NextAfterSeq: next}
	for _, e := range entries {
		detail, err := json.Marshal(journalDetail{HoldID: e.HoldID, Expires: e.Expires, Requested: e.Requested, Funds: e.Funds, Charge: e.Detail})
		if err != nil {
			return nil, err
		}
		d := string(detail)
		if d == "{}" {
			d = ""
		}
		je := &longfairv1.JournalEntry{
			Seq: e.Seq, Time: timestamp(e.Time), Kind: e.Kind.String(), Id: e.ID, Account: e.Account,
			AmountMicroSu: int64(e.Amount), Detail: d, PrevHash: e.PrevHash[:], Hash: e.Hash[:],
		}
		if u := used[e.ID]; e.Kind == ledger.EntryCharge && u.Measured {
			je.CpuSeconds, je.CpuAllocatedSeconds = &u.CPUSeconds, &u.CPUAllocated
			je.PeakMemBytes, je.MemRequestedBytes = &u.PeakMemBytes, &u.MemRequested
		}
		out.Entries = append(out.Entries, je)
	}
	return out, nil
}

func (l *ledgerService) Verify(ctx context.Context, _ *longfairv1.VerifyRequest) (*longfairv1.VerifyResponse, error) {
	report, err := l.s.fsm.Verify()
	var bad *ledger.VerifyError
	if errors.As(err, &bad) {
		return &longfairv1.VerifyResponse{Ok: false, Entries: uint64(report.Entries), FirstBadSeq: bad.Seq, Message: bad.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	return &longfairv1.VerifyResponse{
		Ok: true, Entries: uint64(report.Entries), Accounts: int64(len(report.Accounts)),
		Message: "the journal's hash chain holds and every balance matches it",
	}, nil
}

func (l *ledgerService) UsageReport(ctx context.Context, req *longfairv1.UsageReportRequest) (*longfairv1.UsageReportResponse, error) {
	q := fsm.UsageQuery{
		From: ledgerTime(req.GetFrom()), To: ledgerTime(req.GetTo()),
		ByUser: req.GetGroupBy() == longfairv1.UsageGroupBy_USAGE_GROUP_BY_USER, Account: req.GetAccount(),
	}
	for _, ts := range req.GetSplitAt() {
		q.Split = append(q.Split, ledgerTime(ts))
	}
	rows, err := l.s.fsm.Usage(q)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.UsageReportResponse{}
	for _, r := range rows {
		out.Rows = append(out.Rows, &longfairv1.UsageRow{
			Key: r.Key, Tasks: r.Attempts, Usage: r.Usage, Runtime: duration(r.Runtime), ChargedMicroSu: int64(r.Charged),
			EndedTasks: r.Ended, MeasuredTasks: r.Measured, CpuAllocatedSeconds: r.CPUAllocated, CpuUsedSeconds: r.CPUUsed,
			PeakMemBytes: r.PeakMemBytes, PeakMemRequestedBytes: r.PeakMemRequested, PeriodStart: timestamp(r.Period),
		})
	}
	return out, nil
}
