package server

import (
	"context"
	"math"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// ExplainJob serves the engine's own explanation of a pending job
// (sched.Engine.Explain). The leader explains over the view its passes
// schedule on (passView: the nodes whose worker is ready); a follower,
// asked for a read it may serve from its replica, over the FSM's view
// with every up node. The CLI asks the leader (a consistent read).
func (j *jobsService) ExplainJob(ctx context.Context, req *longfairv1.ExplainJobRequest) (*longfairv1.JobExplanation, error) {
	at := now()
	return j.explain(j.explainView(at), at, req.GetJobId())
}

// ExplainJobs explains each job asked over one view, as ExplainJob would.
func (j *jobsService) ExplainJobs(ctx context.Context, req *longfairv1.ExplainJobsRequest) (*longfairv1.ExplainJobsResponse, error) {
	at := now()
	v := j.explainView(at)
	out := &longfairv1.ExplainJobsResponse{Explanations: make([]*longfairv1.JobExplanation, 0, len(req.GetJobIds()))}
	for _, id := range req.GetJobIds() {
		x, err := j.explain(v, at, id)
		if err != nil {
			return nil, err
		}
		out.Explanations = append(out.Explanations, x)
	}
	return out, nil
}

// explainView is the scheduler's state that explanations read at time at:
// the leader's next pass's view, or a follower's from its FSM.
func (j *jobsService) explainView(at ledger.Time) *sched.View {
	if t := j.s.hub.current(); t != nil {
		return t.passView(at)
	}
	return j.s.fsm.View(at)
}

// explain says why job id waits in v at time at, with an engine of its
// own. The engine only reads v, so one view serves every job of an
// ExplainJobs (whose test checks the answers against ExplainJob's).
func (j *jobsService) explain(v *sched.View, at ledger.Time, id uint64) (*longfairv1.JobExplanation, error) {
	info, err := j.s.fsm.Job(id)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.JobExplanation{Job: jobProto(info), Policy: string(v.Settings.Policy)}
	if info.State.Ended() || info.Pending == 0 {
		return out, nil
	}
	if info.Pending == info.Queued {
		// Placed already: nothing of the policy holds it back.
		out.Wait = longfairv1.JobWait_JOB_WAIT_QUEUED
		return out, nil
	}
	if wait, ok := heldBackProto[info.WaitKind]; ok && (info.WaitKind != fsm.WaitBegin || at < info.Begin) {
		// Not offered to the scheduler: the job says what it waits for.
		out.Wait = wait
		return out, nil
	}
	x, err := sched.NewEngine().Explain(v, info.ID)
	if err != nil {
		// The view was read before the job: a task requeued in between
		// is pending in the job but not yet in the view.
		return nil, status.Errorf(codes.Aborted, "job %d changed while it was explained (%v): run explain again", info.ID, err)
	}
	b, err := j.s.fsm.Balance(info.Account, at)
	if err != nil {
		return nil, err
	}
	out.Rank, out.RankedAccounts, out.FirstAccount = int32(x.Rank), int32(x.Ranked), x.First
	out.RankRule, out.RankExact = x.Rule, x.KeyExact
	if x.Rank > 0 {
		out.RankClass, out.RankKey = x.Key.Class, []float64{finite(x.Key.A), finite(x.Key.B), finite(x.Key.C)}
	}
	if !math.IsInf(x.Beta, 1) {
		out.HasBeta, out.Beta = true, x.Beta
	}
	out.Weight, out.TotalWeight = x.Weight, x.TotalWeight
	out.Waiting, out.Timeout, out.Starving = duration(x.Waiting), duration(x.Timeout), x.Starving
	out.Wait = jobWaitProto[x.Wait]
	out.Lacking, out.LargestNodes, out.LargestShapes = x.Lacking, x.Largest, int32(x.Shapes)
	out.HoldingNodes, out.ClosestNode, out.RoomNodes = int32(x.Holding), x.Closest, x.Room
	if x.ClosestFree != nil {
		out.ClosestFree = namedVector(v.Resources, x.ClosestFree)
	}
	out.AheadTasks, out.AvailableMicroSu = x.Ahead, int64(b.Available)
	out.Reserved, out.Nodes = x.Reserved, int32(x.Nodes)
	if x.HasForecast {
		out.ForecastStart = timestamp(x.Forecast)
	}
	return out, nil
}

// heldBackProto maps what of a job's own terms holds it back.
var heldBackProto = map[string]longfairv1.JobWait{
	fsm.WaitDependency: longfairv1.JobWait_JOB_WAIT_DEPENDENCY,
	fsm.WaitBegin:      longfairv1.JobWait_JOB_WAIT_BEGIN,
	fsm.WaitThrottle:   longfairv1.JobWait_JOB_WAIT_THROTTLE,
	fsm.WaitHeld:       longfairv1.JobWait_JOB_WAIT_HELD,
	fsm.WaitLimit:      longfairv1.JobWait_JOB_WAIT_LIMIT,
}

var jobWaitProto = map[sched.Wait]longfairv1.JobWait{
	sched.WaitNoNodes:     longfairv1.JobWait_JOB_WAIT_NO_NODES,
	sched.WaitNoNodeHolds: longfairv1.JobWait_JOB_WAIT_NO_NODE_HOLDS,
	sched.WaitNoRoom:      longfairv1.JobWait_JOB_WAIT_NO_ROOM,
	sched.WaitRoom:        longfairv1.JobWait_JOB_WAIT_ROOM,
}

// QuoteJob answers what SubmitJob would do with req, submitting nothing:
// the FSM prices and checks it (fsm.FSM.Quote, the checks SubmitJob
// makes), and the engine explains it as a pending job at the end of its
// account's queue over the same view as ExplainJob, for its forecast.
func (j *jobsService) QuoteJob(ctx context.Context, req *longfairv1.SubmitJobRequest) (*longfairv1.JobQuote, error) {
	at := now()
	q, err := j.s.fsm.Quote(submitCommand(req), at)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.JobQuote{Demand: q.Demand, Nodes: req.GetNodes(), Tasks: req.GetTasks(),
		HoldMicroSu: int64(q.Hold), TaskHourlyMicroSu: int64(q.TaskHourly), AvailableMicroSu: int64(q.Available)}
	if q.Refusal != nil {
		out.Refusal = q.Refusal.Error()
		if q.Demand == nil {
			return out, nil
		}
	}
	var v *sched.View
	if t := j.s.hub.current(); t != nil {
		v = t.passView(at)
	} else {
		v = j.s.fsm.View(at)
	}
	for i := range v.Accounts {
		if v.Accounts[i].Name == req.GetAccount() {
			v.Accounts[i].Queue = append(v.Accounts[i].Queue, q.Job)
		}
	}
	x, err := sched.NewEngine().Explain(v, fsm.QuoteJobID)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "forecast the job's start: %v", err)
	}
	out.Reserved, out.Rank, out.RankedAccounts, out.Wait = x.Reserved, int32(x.Rank), int32(x.Ranked), jobWaitProto[x.Wait]
	if x.HasForecast {
		out.ForecastStart = timestamp(x.Forecast)
	}
	return out, nil
}
