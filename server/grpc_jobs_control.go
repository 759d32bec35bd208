package server

import (
	"context"
	"slices"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/fsm"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// SignalJob sends a signal to every process of a job's running attempts,
// on every node each holds, through the workers' streams, which only the
// leader has (methods.go routes the call there). Nothing is committed: a
// signal is an act on processes that exist now, as in Slurm, and a task
// that starts later does not get it. A worker that is not connected at
// this moment does not get it either; the answer names only the tasks
// whose every node was sent it.
func (j *jobsService) SignalJob(ctx context.Context, req *longfairv1.SignalJobRequest) (*longfairv1.SignalJobResponse, error) {
	sig, err := core.ParseSignal(req.GetSignal())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if _, err := j.s.fsm.Job(req.GetJobId()); err != nil {
		return nil, err
	}
	t := j.s.hub.current()
	if t == nil {
		return nil, status.Error(codes.Unavailable, "this server no longer leads, so it cannot reach the job's workers: try again")
	}
	out := &longfairv1.SignalJobResponse{Signal: int32(sig)}
	for _, ti := range j.s.fsm.Running("") {
		if ti.JobID != req.GetJobId() {
			continue
		}
		k := keyOfTask(ti)
		sent := true
		for _, node := range taskNodes(ti) {
			c := t.conn(node)
			if c == nil {
				sent = false
				continue
			}
			c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Signal{Signal: &longfairv1.Signal{
				Attempts: []*longfairv1.AttemptRef{k.ref()}, Signal: int32(sig),
			}}})
		}
		if sent && !slices.Contains(out.Tasks, ti.Task) {
			out.Tasks = append(out.Tasks, ti.Task)
		}
	}
	if len(out.Tasks) == 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "job %d has no running task whose workers are connected, so there is nothing to send SIG%s to: 'longfair job show %d' shows its tasks", req.GetJobId(), core.SignalName(int(sig)), req.GetJobId())
	}
	return out, nil
}

// RequeueJob marks the job's running attempts to run again (fsm
// RequeueJob); the sweep it asks for has their workers stop them.
func (j *jobsService) RequeueJob(ctx context.Context, req *longfairv1.RequeueJobRequest) (*longfairv1.Job, error) {
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, &fsm.RequeueJob{JobID: req.GetJobId()})
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}
