package worker

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// outputChunk is the most one TaskOutputChunk carries.
const outputChunk = 64 << 10

// followPoll is how often a followed file is checked for more output.
const followPoll = 100 * time.Millisecond

// outputService implements longfairv1.TaskOutputServer: it streams the
// output files of the attempts that ran on this node.
type outputService struct {
	longfairv1.UnimplementedTaskOutputServer
	ag *Agent
}

func (s *outputService) ReadTaskOutput(req *longfairv1.ReadTaskOutputRequest, stream grpc.ServerStreamingServer[longfairv1.TaskOutputChunk]) error {
	if req.GetJobId() == 0 || req.GetTask() < 0 || req.GetAttempt() < 0 || req.GetOffset() < 0 {
		return status.Error(codes.InvalidArgument, "job_id must be positive and task, attempt and offset not negative: give the task as JOB and INDEX, and attempt 0 for the latest")
	}
	workDir := s.ag.cfg.WorkDir
	attempt := req.GetAttempt()
	if attempt == 0 {
		latest, err := latestAttempt(workDir, req.GetJobId(), req.GetTask())
		if err != nil {
			return status.Errorf(codes.NotFound, "node %s has no output of task %d of job %d: check the job and task, and which node the task ran on", s.ag.cfg.NodeID, req.GetTask(), req.GetJobId())
		}
		attempt = latest
	}
	k := attemptKey{req.GetJobId(), req.GetTask(), attempt}
	f, err := os.Open(outputPath(workDir, k, req.GetStream()))
	if errors.Is(err, fs.ErrNotExist) {
		return status.Errorf(codes.NotFound, "node %s has no output of attempt %d of task %d of job %d: check which node that attempt ran on", s.ag.cfg.NodeID, attempt, req.GetTask(), req.GetJobId())
	}
	if err != nil {
		return status.Errorf(codes.Internal, "open output: %v", err)
	}
	defer f.Close()
	offset := req.GetOffset()
	buf := make([]byte, outputChunk)
	for {
		n, err := f.ReadAt(buf, offset)
		if n > 0 {
			if serr := stream.Send(&longfairv1.TaskOutputChunk{Data: buf[:n], Offset: offset}); serr != nil {
				return serr
			}
			offset += int64(n)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return status.Errorf(codes.Internal, "read output: %v", err)
		}
		if !req.GetFollow() || !s.ag.runs(k) {
			// One more read: the attempt may have written its last bytes
			// between the read above and its end.
			if n, _ := f.ReadAt(buf, offset); n > 0 {
				continue
			}
			return nil
		}
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-time.After(followPoll):
		}
	}
}

// runs reports whether attempt k is running or waiting to start here.
func (ag *Agent) runs(k attemptKey) bool {
	ag.tasks.mu.Lock()
	defer ag.tasks.mu.Unlock()
	a, ok := ag.tasks.attempts[k]
	return ok && !a.ended
}
