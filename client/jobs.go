package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// JobSpec describes a job array: Tasks identical tasks, each holding
// Demand for at most Walltime while it runs Command.
type JobSpec struct {
	// Account is charged and credited with the usage; User must be one of
	// its members.
	Account, User string
	// Name is free text for humans.
	Name string
	// Demand per task by resource name: "cpu" cores, "mem" bytes, "mic"
	// devices, or any resource the cluster declares.
	Demand map[string]float64
	// Tasks in the array; 0 means 1.
	Tasks int64
	// Nodes each task spans, Demand on each (a parallel job, such as an
	// MPI run); 0 means 1.
	Nodes int
	// Ranks is how many processes a parallel task runs across its nodes
	// (Slurm's --ntasks); 0 means one per node.
	Ranks int
	// Walltime per task; a task is stopped when it runs longer.
	Walltime time.Duration
	// Command is the argv of every task; each task finds its index in the
	// environment variable LONGFAIR_TASK_INDEX.
	Command []string
	// MaxAttempts is how often a task lost with its node is started; 0
	// means the cluster default (3).
	MaxAttempts int
	// RequestID makes the submission idempotent: submitting the same spec
	// with the same id again returns the first job. Empty: the client
	// picks a random one, which covers its own retries.
	RequestID string
	// Dir is the absolute directory the tasks run in; "" lets each
	// worker make one per attempt.
	Dir string
	// Env is the tasks' environment as NAME=value, used when EnvCaptured
	// (even empty); without it a task gets its worker's environment.
	Env         []string
	EnvCaptured bool
	// Hold keeps the job from starting until it is released; Dependency
	// is a Slurm-style dependency list; Begin, when set, is the earliest
	// start; Nice lowers the job's priority; Exclusive asks for whole
	// nodes. The server refuses each until it implements it.
	Hold       bool
	Dependency string
	Begin      time.Time
	Nice       int32
	Exclusive  bool
}

// Request is the API request for the spec.
func (s JobSpec) Request() *longfairv1.SubmitJobRequest {
	tasks := s.Tasks
	if tasks == 0 {
		tasks = 1
	}
	req := &longfairv1.SubmitJobRequest{
		Account: s.Account, User: s.User, Name: s.Name, Demand: s.Demand, Tasks: tasks, Nodes: int32(min(s.Nodes, longfairv1.MaxNodesPerJob+1)), Ntasks: int32(min(s.Ranks, longfairv1.MaxTasksPerJob+1)),
		Walltime: durationpb.New(s.Walltime), Command: s.Command,
		MaxAttempts: int32(min(s.MaxAttempts, longfairv1.MaxAttemptsLimit+1)), RequestId: s.RequestID,
		Dir: s.Dir, Env: s.Env, EnvCaptured: s.EnvCaptured,
		Hold: s.Hold, Dependency: s.Dependency, Nice: s.Nice, Exclusive: s.Exclusive,
	}
	if !s.Begin.IsZero() {
		req.Begin = timestamppb.New(s.Begin)
	}
	return req
}

// Submit submits a job array. The cluster holds the job's worst-case SU
// cost at once; ResourceExhausted says how much is missing when the
// account's balance cannot cover it.
func (c *Client) Submit(ctx context.Context, spec JobSpec) (*longfairv1.Job, error) {
	resp, err := c.Jobs().SubmitJob(ctx, spec.Request())
	if err != nil {
		return nil, err
	}
	return resp.GetJob(), nil
}

// Job returns a job, as of the latest write the cluster acknowledged.
func (c *Client) Job(ctx context.Context, id uint64) (*longfairv1.Job, error) {
	return c.Jobs().GetJob(ConsistentRead(ctx), &longfairv1.GetJobRequest{JobId: id})
}

// Cancel cancels a job: its pending tasks never start and its running
// tasks are stopped. Cancelling a cancelled job returns it unchanged.
func (c *Client) Cancel(ctx context.Context, id uint64) (*longfairv1.Job, error) {
	return c.Jobs().CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: id})
}

// JobEnded reports whether a job is in a final state.
func JobEnded(j *longfairv1.Job) bool {
	switch j.GetState() {
	case longfairv1.JobState_JOB_STATE_SUCCEEDED, longfairv1.JobState_JOB_STATE_FAILED, longfairv1.JobState_JOB_STATE_CANCELLED:
		return true
	}
	return false
}

// ErrJobNotSucceeded is wrapped by WaitJob's error when the job ended
// failed or cancelled.
var ErrJobNotSucceeded = errors.New("job did not succeed")

// WaitJob polls a job every interval (0: one second) until it ends or ctx
// is done, calling onChange (if not nil) with the job each time its state
// or task counts change, first with the job as it is. It returns the final
// job; the error wraps ErrJobNotSucceeded when the job failed or was
// cancelled.
func (c *Client) WaitJob(ctx context.Context, id uint64, interval time.Duration, onChange func(*longfairv1.Job)) (*longfairv1.Job, error) {
	if interval <= 0 {
		interval = time.Second
	}
	var last *longfairv1.Job
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			return last, err
		}
		if last == nil || jobProgressed(last, j) {
			if onChange != nil {
				onChange(j)
			}
			last = j
		}
		if JobEnded(j) {
			if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
				return j, fmt.Errorf("job %d ended %s (%d succeeded, %d failed, %d cancelled of %d tasks): %w",
					id, StateName(j.GetState()), j.GetSucceededTasks(), j.GetFailedTasks(), j.GetCancelledTasks(), j.GetTasks(), ErrJobNotSucceeded)
			}
			return j, nil
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("job %d still %s: %w", id, StateName(last.GetState()), ctx.Err())
		case <-time.After(interval):
		}
	}
}

// jobProgressed reports whether anything a watcher cares about changed.
func jobProgressed(a, b *longfairv1.Job) bool {
	return a.GetState() != b.GetState() || a.GetPendingTasks() != b.GetPendingTasks() ||
		a.GetRunningTasks() != b.GetRunningTasks() || a.GetSucceededTasks() != b.GetSucceededTasks() ||
		a.GetFailedTasks() != b.GetFailedTasks() || a.GetCancelledTasks() != b.GetCancelledTasks() ||
		!proto.Equal(a.GetEndedAt(), b.GetEndedAt())
}
