package cli

import (
	"context"
	"fmt"
	"iter"

	"golang.org/x/sync/errgroup"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// fetchAhead is how many calls fetchEach has in flight: a listing of
// thousands of jobs' tasks takes a call per page, and one at a time it
// would wait on as many round trips in a row, while each call costs the
// server little.
const fetchAhead = 8

// fetchEach calls fetch for 0 to n-1, fetchAhead at a time, and returns
// the results by index. The first error cancels the calls not yet made
// and is returned, as is ctx's when it ends first.
func fetchEach[T any](ctx context.Context, n int, fetch func(ctx context.Context, i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchAhead)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			v, err := fetch(gctx, i)
			out[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Calls skipped because ctx ended leave results unset.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// collectTasks gathers what list (AllTasks or AllAttempts) yields for a
// job; an error names the job.
func collectTasks(ctx context.Context, job uint64, list func(context.Context, uint64) iter.Seq2[*longfairv1.Task, error]) ([]*longfairv1.Task, error) {
	var tasks []*longfairv1.Task
	for t, err := range list(ctx, job) {
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", job, err)
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// tasksByJob reads the tasks of jobs (every attempt of each, with all),
// and returns them by the jobs' positions; with want, only those of the
// jobs at the positions it wants (nil for the others). It asks for many
// jobs' tasks in each call (client.TasksOf), grouping jobs whose tasks
// fill about a page, and makes those calls fetchAhead at a time: a
// month's jobs take a call per thousand tasks, not one per job.
func tasksByJob(ctx context.Context, c *client.Client, jobs []*longfairv1.Job, all bool, want func(i int) bool) ([][]*longfairv1.Task, error) {
	byID := make(map[uint64][]*longfairv1.Task, len(jobs))
	var calls [][]uint64
	var ids []uint64
	var tasks int64
	for i, j := range jobs {
		if _, seen := byID[j.GetId()]; seen || want != nil && !want(i) {
			continue // sacct --jobs may name a job twice
		}
		byID[j.GetId()] = nil
		if len(ids) > 0 && (tasks+j.GetTasks() > longfairv1.MaxPageSize || len(ids) == longfairv1.MaxTaskListJobs) {
			calls, ids, tasks = append(calls, ids), nil, 0
		}
		ids = append(ids, j.GetId())
		tasks += j.GetTasks()
	}
	if len(ids) > 0 {
		calls = append(calls, ids)
	}
	listed, err := fetchEach(ctx, len(calls), func(ctx context.Context, k int) ([]*longfairv1.Task, error) {
		var out []*longfairv1.Task
		for t, err := range c.TasksOf(ctx, calls[k], all) {
			if err != nil {
				return nil, fmt.Errorf("tasks of jobs %d to %d: %w", calls[k][0], calls[k][len(calls[k])-1], err)
			}
			out = append(out, t)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	for _, list := range listed {
		for _, t := range list {
			if _, ok := byID[t.GetJobId()]; !ok {
				return nil, fmt.Errorf("the server listed a task of job %d, which was not asked for: the server is faulty, upgrade or report it", t.GetJobId())
			}
			byID[t.GetJobId()] = append(byID[t.GetJobId()], t)
		}
	}
	out := make([][]*longfairv1.Task, len(jobs))
	for i, j := range jobs {
		out[i] = byID[j.GetId()] // nil for a job not wanted
	}
	return out, nil
}
