package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// jobsService implements longfairv1.JobsServer.
type jobsService struct {
	longfairv1.UnimplementedJobsServer
	s *Server
}

func jobStateProto(s fsm.JobState) longfairv1.JobState {
	switch s {
	case fsm.JobPending:
		return longfairv1.JobState_JOB_STATE_PENDING
	case fsm.JobRunning:
		return longfairv1.JobState_JOB_STATE_RUNNING
	case fsm.JobSucceeded:
		return longfairv1.JobState_JOB_STATE_SUCCEEDED
	case fsm.JobFailed:
		return longfairv1.JobState_JOB_STATE_FAILED
	case fsm.JobCancelled:
		return longfairv1.JobState_JOB_STATE_CANCELLED
	}
	return longfairv1.JobState_JOB_STATE_UNSPECIFIED
}

func jobStateFromProto(s longfairv1.JobState) (fsm.JobState, error) {
	switch s {
	case longfairv1.JobState_JOB_STATE_PENDING:
		return fsm.JobPending, nil
	case longfairv1.JobState_JOB_STATE_RUNNING:
		return fsm.JobRunning, nil
	case longfairv1.JobState_JOB_STATE_SUCCEEDED:
		return fsm.JobSucceeded, nil
	case longfairv1.JobState_JOB_STATE_FAILED:
		return fsm.JobFailed, nil
	case longfairv1.JobState_JOB_STATE_CANCELLED:
		return fsm.JobCancelled, nil
	}
	return "", status.Errorf(codes.InvalidArgument, "states holds %v: use JOB_STATE_PENDING, _RUNNING, _SUCCEEDED, _FAILED or _CANCELLED", s)
}

func taskStateProto(s fsm.TaskState) longfairv1.TaskState {
	switch s {
	case fsm.TaskQueued:
		return longfairv1.TaskState_TASK_STATE_QUEUED
	case fsm.TaskAssigned:
		return longfairv1.TaskState_TASK_STATE_ASSIGNED
	case fsm.TaskRunning:
		return longfairv1.TaskState_TASK_STATE_RUNNING
	case fsm.TaskSucceeded:
		return longfairv1.TaskState_TASK_STATE_SUCCEEDED
	case fsm.TaskFailed:
		return longfairv1.TaskState_TASK_STATE_FAILED
	case fsm.TaskLostState:
		return longfairv1.TaskState_TASK_STATE_LOST
	}
	return longfairv1.TaskState_TASK_STATE_UNSPECIFIED
}

func jobProto(j fsm.JobInfo) *longfairv1.Job {
	out := &longfairv1.Job{
		Id: j.ID, Account: j.Account, User: j.User, Name: j.Name, Demand: j.Demand,
		Tasks: j.Tasks, Walltime: duration(j.Walltime), Command: j.Command,
		MaxAttempts: int32(j.MaxAttempts), State: jobStateProto(j.State),
		SubmittedAt: timestamp(j.SubmittedAt), EndedAt: timestamp(j.EndedAt),
		PendingTasks: j.Pending, RunningTasks: j.Running, QueuedTasks: j.Queued, SucceededTasks: j.Succeeded,
		FailedTasks: j.Failed, CancelledTasks: j.Cancelled,
		HoldMicroSu: int64(j.Hold), ChargedMicroSu: int64(j.Charged), Nodes: int32(j.Nodes), Ntasks: int32(j.Ranks), Exclusive: j.Exclusive,
		Dependency: j.Dependency, Waiting: j.Waiting, Reason: j.Reason,
		ArrayThrottle: int32(j.Throttle), Nice: int32(j.Nice), Held: j.Held, Priority: int32(j.Priority), Requeues: int32(j.Requeues),
	}
	if j.Begin != 0 {
		out.Begin = timestamp(j.Begin)
	}
	return out
}

func taskProto(t fsm.TaskInfo) *longfairv1.Task {
	return &longfairv1.Task{
		JobId: t.JobID, Index: t.Task, Attempt: int32(t.Attempt), State: taskStateProto(t.State), Node: t.Node,
		AssignedAt: timestamp(t.AssignedAt), StartedAt: timestamp(t.StartedAt), EndedAt: timestamp(t.EndedAt),
		ExitCode: t.ExitCode, Runtime: duration(t.Runtime), ChargedMicroSu: int64(t.Charged), Nodes: t.Nodes,
		CpuSeconds: t.CPUSeconds, PeakMemBytes: t.PeakMemBytes, Reason: t.Reason, Requeued: t.Requeue, Queued: t.Queued,
		Walltime: optionalDuration(t.Limit),
	}
}

func (j *jobsService) SubmitJob(ctx context.Context, req *longfairv1.SubmitJobRequest) (*longfairv1.SubmitJobResponse, error) {
	if err := mayBeNotNice(ctx, req.GetNice()); err != nil {
		return nil, err
	}
	c := submitCommand(req)
	if c.Dependency != "" {
		c.DependencyViewer = dependencyViewer(ctx)
	}
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, c)
	if err != nil {
		return nil, err
	}
	return &longfairv1.SubmitJobResponse{Job: jobProto(info)}, nil
}

// dependencyViewer is whose jobs a dependency given in the call may
// name: a user token's user names its accounts' jobs, and another's is
// refused as unknown (fsm.SubmitJob); an admin, or a call to a cluster
// without the ACL, names any ("").
func dependencyViewer(ctx context.Context) string {
	if id, ok := IdentityFrom(ctx); ok && id.Role == fsm.RoleUser {
		return id.User
	}
	return ""
}

// submitCommand is the FSM command of a submission, for SubmitJob and
// for QuoteJob, which answers what it would do.
func submitCommand(req *longfairv1.SubmitJobRequest) *fsm.SubmitJob {
	return &fsm.SubmitJob{
		RequestID: req.GetRequestId(), Account: req.GetAccount(), User: req.GetUser(), Name: req.GetName(),
		Demand: req.GetDemand(), Tasks: req.GetTasks(), Nodes: int(req.GetNodes()), Ranks: int(req.GetNtasks()), Exclusive: req.GetExclusive(), Walltime: req.GetWalltime().AsDuration(),
		Command: req.GetCommand(), MaxAttempts: int(req.GetMaxAttempts()),
		CheckFit: true, // refuse a task no known node can hold (fsm/jobs_fit.go)
		Dir:      req.GetDir(), Env: req.GetEnv(), EnvCaptured: req.GetEnvCaptured(), Dependency: req.GetDependency(),
		Begin: ledgerTime(req.GetBegin()), Throttle: int(req.GetArrayThrottle()), Nice: int(req.GetNice()), Hold: req.GetHold(),
		CheckIdentity: true, // refuse a user that maps to root (fsm/identity.go)
	}
}

func (j *jobsService) CancelJob(ctx context.Context, req *longfairv1.CancelJobRequest) (*longfairv1.Job, error) {
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, &fsm.CancelJob{JobID: req.GetJobId()})
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}

func (j *jobsService) GetJob(ctx context.Context, req *longfairv1.GetJobRequest) (*longfairv1.Job, error) {
	info, err := j.s.fsm.Job(req.GetJobId())
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}

func (j *jobsService) ListJobs(ctx context.Context, req *longfairv1.ListJobsRequest) (*longfairv1.ListJobsResponse, error) {
	before, err := decodeUintToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	q := fsm.JobFilter{Account: req.GetAccount(), User: req.GetUser(), Since: ledgerTime(req.GetSince()), Before: before, Limit: pageSize(req.GetPageSize())}
	if req.GetUntil() != nil {
		// The epoch itself is a window no job was submitted in, not
		// "until now" (the filter's zero).
		q.Until = max(ledgerTime(req.GetUntil()), 1)
	}
	for _, s := range req.GetStates() {
		st, err := jobStateFromProto(s)
		if err != nil {
			return nil, err
		}
		q.States = append(q.States, st)
	}
	list, next, err := j.s.fsm.Jobs(q)
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListJobsResponse{NextPageToken: encodeUintToken(next)}
	for _, info := range list {
		out.Jobs = append(out.Jobs, jobProto(info))
	}
	return out, nil
}

func (j *jobsService) ListTasks(ctx context.Context, req *longfairv1.ListTasksRequest) (*longfairv1.ListTasksResponse, error) {
	if ids := req.GetJobIds(); len(ids) > 0 {
		return j.listTasksOf(ids, req)
	}
	from, err := decodeUintToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	list, next, err := j.s.fsm.Tasks(req.GetJobId(), int64(from), pageSize(req.GetPageSize()))
	if req.GetAllAttempts() {
		list, next, err = j.s.fsm.Attempts(req.GetJobId(), int64(from), pageSize(req.GetPageSize()))
	}
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListTasksResponse{NextPageToken: encodeUintToken(uint64(next))}
	for _, info := range list {
		out.Tasks = append(out.Tasks, taskProto(info))
	}
	return out, nil
}

// listTasksOf is ListTasks for several jobs. Its page token is the
// position of a job in ids and a task index in it.
func (j *jobsService) listTasksOf(ids []uint64, req *longfairv1.ListTasksRequest) (*longfairv1.ListTasksResponse, error) {
	at, err := decodeTasksCursor(req.GetPageToken(), len(ids))
	if err != nil {
		return nil, err
	}
	list, next, err := j.s.fsm.TasksOf(ids, at, pageSize(req.GetPageSize()), req.GetAllAttempts())
	if err != nil {
		return nil, err
	}
	out := &longfairv1.ListTasksResponse{Tasks: make([]*longfairv1.Task, 0, len(list))}
	if next.Job < len(ids) {
		out.NextPageToken = encodeToken(strconv.Itoa(next.Job) + "." + strconv.FormatInt(next.Task, 10))
	}
	for _, info := range list {
		out.Tasks = append(out.Tasks, taskProto(info))
	}
	return out, nil
}

// decodeTasksCursor reads listTasksOf's page token for a list of n jobs.
func decodeTasksCursor(token string, n int) (fsm.TasksCursor, error) {
	s, err := decodeToken(token)
	if err != nil || s == "" {
		return fsm.TasksCursor{}, err
	}
	job, task, ok := strings.Cut(s, ".")
	k, kerr := strconv.Atoi(job)
	t, terr := strconv.ParseInt(task, 10, 64)
	if !ok || kerr != nil || terr != nil || k < 0 || k >= n || t < 0 {
		return fsm.TasksCursor{}, status.Error(codes.InvalidArgument, "page_token is not one this server issued for these job_ids: pass the next_page_token of the previous response unchanged, with the same job_ids")
	}
	return fsm.TasksCursor{Job: k, Task: t}, nil
}

// mayBeNotNice refuses a negative nice, which moves a job ahead of its
// account's earlier jobs, unless an admin asks (or the ACL is off).
func mayBeNotNice(ctx context.Context, nice int32) error {
	if nice >= 0 {
		return nil
	}
	return adminOnly(ctx, fmt.Sprintf("nice %d moves the job ahead of its account's earlier jobs, which only an admin may do: give a nice of 0 or more", nice))
}

// adminOnly refuses, with why, a request only an admin may make, unless
// an admin makes it (or the ACL is off).
func adminOnly(ctx context.Context, why string) error {
	if id, ok := IdentityFrom(ctx); ok && id.Role != fsm.RoleAdmin {
		return status.Error(codes.PermissionDenied, why)
	}
	return nil
}

func (j *jobsService) HoldJob(ctx context.Context, req *longfairv1.HoldJobRequest) (*longfairv1.Job, error) {
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, &fsm.HoldJob{JobID: req.GetJobId(), Hold: true})
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}

func (j *jobsService) ReleaseJob(ctx context.Context, req *longfairv1.ReleaseJobRequest) (*longfairv1.Job, error) {
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, &fsm.HoldJob{JobID: req.GetJobId()})
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}

func (j *jobsService) UpdateJob(ctx context.Context, req *longfairv1.UpdateJobRequest) (*longfairv1.Job, error) {
	if err := mayBeNotNice(ctx, req.GetNice()); err != nil {
		return nil, err
	}
	c := &fsm.UpdateJob{JobID: req.GetJobId(), Name: req.Name, Dependency: req.Dependency}
	if req.Dependency != nil {
		c.DependencyViewer = dependencyViewer(ctx)
	}
	if req.Walltime != nil {
		w := req.GetWalltime().AsDuration()
		c.Walltime = &w
	}
	if req.ArrayThrottle != nil {
		n := int(req.GetArrayThrottle())
		c.Throttle = &n
	}
	if req.Nice != nil {
		n := int(req.GetNice())
		c.Nice = &n
	}
	if req.Priority != nil {
		if err := adminOnly(ctx, "a priority moves the job ahead of other accounts' jobs, which only an admin may do"); err != nil {
			return nil, err
		}
		n := int(req.GetPriority())
		c.Priority = &n
	}
	info, err := proposeFor[fsm.JobInfo](ctx, j.s, c)
	if err != nil {
		return nil, err
	}
	return jobProto(info), nil
}
