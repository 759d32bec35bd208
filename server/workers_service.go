package server

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// workersService implements longfairv1.WorkersServer.
type workersService struct {
	longfairv1.UnimplementedWorkersServer
	s *Server
}

// Connect serves a worker's stream on the leader. Any other server refuses
// it, naming the leader when it knows it: a worker's stream must reach the
// leader itself, not a proxy that would outlive a change of leader.
func (w *workersService) Connect(stream grpc.BidiStreamingServer[longfairv1.WorkerMessage, longfairv1.LeaderMessage]) error {
	t := w.s.hub.current()
	if t == nil || !w.s.IsLeader() {
		id, addr, err := w.s.leaderGRPC()
		if err != nil || id == w.s.cfg.NodeID {
			return status.Error(codes.Unavailable, "this server is not serving workers yet (no leader, or leadership is changing); ask Operator.GetLeader again in a moment")
		}
		return status.Errorf(codes.Unavailable, "this server is not the leader; the leader is %s at %s: connect there", id, addr)
	}
	return t.serve(stream)
}

// ReadTaskOutput finds the node an attempt ran on and streams its output
// from that node's worker.
func (w *workersService) ReadTaskOutput(req *longfairv1.ReadTaskOutputRequest, stream grpc.ServerStreamingServer[longfairv1.TaskOutputChunk]) error {
	if req.GetJobId() == 0 || req.GetTask() < 0 || req.GetAttempt() < 0 || req.GetOffset() < 0 {
		return status.Error(codes.InvalidArgument, "job_id must be positive and task, attempt and offset not negative: give the task as JOB and INDEX, and attempt 0 for the latest")
	}
	node, attempt, err := w.attemptNode(req.GetJobId(), req.GetTask(), int(req.GetAttempt()))
	if err != nil {
		return err
	}
	addr := ""
	for _, n := range w.s.fsm.Nodes() {
		if n.ID == node {
			addr = n.Address
		}
	}
	if addr == "" {
		return status.Errorf(codes.Unavailable, "attempt %d of task %d of job %d ran on node %s, whose worker address is unknown: its output can be read once the worker is back", attempt, req.GetTask(), req.GetJobId(), node)
	}
	conn, err := w.s.fwd.workerConn(addr)
	if err != nil {
		return err
	}
	fwd := &longfairv1.ReadTaskOutputRequest{
		JobId: req.GetJobId(), Task: req.GetTask(), Attempt: int32(attempt),
		Stream: req.GetStream(), Offset: req.GetOffset(), Follow: req.GetFollow(),
	}
	cs, err := longfairv1.NewTaskOutputClient(conn).ReadTaskOutput(callerToken(stream.Context()), fwd)
	if err != nil {
		return workerError(err, node)
	}
	for {
		chunk, err := cs.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return workerError(err, node)
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
	}
}

// callerToken carries the caller's bearer token, and nothing else of its
// metadata, on to the worker: the worker asks the servers whether that
// token may read the job (worker/caller_auth.go), exactly as this server
// just did, so a server has no more right to a worker's output than its
// caller.
func callerToken(ctx context.Context) context.Context {
	in, _ := metadata.FromIncomingContext(ctx)
	if v := in.Get(longfairv1.AuthorizationMetadataKey); len(v) == 1 {
		return metadata.AppendToOutgoingContext(ctx, longfairv1.AuthorizationMetadataKey, v[0])
	}
	return ctx
}

// attemptNode returns the node and number of an attempt; attempt 0 means
// the task's latest.
func (w *workersService) attemptNode(job uint64, task int64, attempt int) (string, int, error) {
	list, _, err := w.s.fsm.Tasks(job, task, 1)
	if err != nil {
		return "", 0, err
	}
	if len(list) == 0 || list[0].Task != task {
		return "", 0, status.Errorf(codes.NotFound, "task %d of job %d has not run yet: it has no output", task, job)
	}
	latest := list[0]
	if attempt == 0 || attempt == latest.Attempt {
		return latest.Node, latest.Attempt, nil
	}
	if attempt > latest.Attempt {
		return "", 0, status.Errorf(codes.NotFound, "task %d of job %d has had %d attempts; there is no attempt %d", task, job, latest.Attempt, attempt)
	}
	ti, err := w.s.fsm.Attempt(job, task, attempt)
	if err != nil {
		return "", 0, err
	}
	return ti.Node, attempt, nil
}

// workerError says which worker a failed output read went to.
func workerError(err error, node string) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.Unavailable {
		return status.Errorf(codes.Unavailable, "cannot read output from the worker of node %s: %v; retry when it is up", node, err)
	}
	if errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	return err
}
