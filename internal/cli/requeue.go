package cli

import (
	"context"
	"fmt"
	"io"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const requeueHelp = `Usage: longfair requeue JOB_ID [JOB_ID...] [flags]

Stops the jobs' running tasks and queues them to run again from the
start, as Slurm's 'scontrol requeue' does. Each stopped task is charged
for the time it ran; since the job's SU hold is kept for the reruns, the
account must cover one more run of each requeued task (refused, with
nothing changed, when it cannot). Pending tasks keep their place. Users
requeue their own jobs, admins any.

Example:
  longfair requeue 12
`

func requeueCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("requeue", requeueHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		ids, err := parseJobIDs("requeue", args)
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var jobs []*longfairv1.Job
		for _, id := range ids {
			j, err := c.Jobs().RequeueJob(ctx, &longfairv1.RequeueJobRequest{JobId: id})
			if err != nil {
				return fmt.Errorf("job %d: %w", id, err)
			}
			jobs = append(jobs, j)
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, messages(jobs))
		case "csv":
			return writeTable(out.stdout, "csv", jobsTable(jobs))
		}
		for _, j := range jobs {
			fmt.Fprintf(out.stdout, "job %d requeued: its %d running task(s) are being stopped and will run again\n", j.GetId(), j.GetRunningTasks())
		}
		return nil
	})
}
