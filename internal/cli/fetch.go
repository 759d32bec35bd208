package cli

import (
	"context"
	"fmt"
	"iter"

	"golang.org/x/sync/errgroup"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// fetchAhead is how many calls fetchEach has in flight: sacct and squeue
// make one call per job (its tasks, why it waits), and one at a time a
// listing of hundreds of jobs waited on as many round trips in a row —
// 650 jobs took sacct 0.6 s — while each call costs the server little.
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
