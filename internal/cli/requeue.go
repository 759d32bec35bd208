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
	call := func(ctx context.Context, c *client.Client, id uint64) (*longfairv1.Job, error) {
		return c.Jobs().RequeueJob(ctx, &longfairv1.RequeueJobRequest{JobId: id})
	}
	return jobVerb("requeue", requeueHelp, call, func(j *longfairv1.Job) string {
		return fmt.Sprintf("job %d requeued: its %d running task(s) are being stopped and will run again", j.GetId(), j.GetRunningTasks())
	})
}
