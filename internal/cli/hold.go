package cli

import (
	"context"
	"fmt"
	"io"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const holdHelp = `Usage: longfair hold JOB_ID [JOB_ID...] [flags]

Holds jobs: they start no more tasks until released ('longfair release');
tasks already running go on. A held job keeps its place and its SU hold.
Users hold their own jobs, admins any. Holding a held job changes nothing.
'longfair submit --hold' submits a job held.

Example:
  longfair hold 12 13
`

const releaseHelp = `Usage: longfair release JOB_ID [JOB_ID...] [flags]

Releases held jobs: their tasks may start again. Releasing a job that is
not held changes nothing.

Example:
  longfair release 12
`

func holdCommand() func(args []string, stdout, stderr io.Writer) error {
	return holdOrRelease("hold", holdHelp, true)
}

func releaseCommand() func(args []string, stdout, stderr io.Writer) error {
	return holdOrRelease("release", releaseHelp, false)
}

// holdOrRelease is 'longfair hold' (hold) or 'longfair release'.
func holdOrRelease(name, help string, hold bool) func(args []string, stdout, stderr io.Writer) error {
	call := func(ctx context.Context, c *client.Client, id uint64) (*longfairv1.Job, error) {
		if hold {
			return c.Jobs().HoldJob(ctx, &longfairv1.HoldJobRequest{JobId: id})
		}
		return c.Jobs().ReleaseJob(ctx, &longfairv1.ReleaseJobRequest{JobId: id})
	}
	return jobVerb(name, help, call, func(j *longfairv1.Job) string {
		if j.GetHeld() {
			return fmt.Sprintf("job %d held: no more of its tasks start until 'longfair release %d' (%d running go on)", j.GetId(), j.GetId(), j.GetRunningTasks())
		}
		return fmt.Sprintf("job %d released: its tasks may start", j.GetId())
	})
}

// jobVerb is a command that makes one call per JOB_ID argument (hold,
// release, requeue) and prints a line per job it changed, or the jobs as
// JSON or CSV.
func jobVerb(name, help string, call func(context.Context, *client.Client, uint64) (*longfairv1.Job, error), line func(*longfairv1.Job) string) func(args []string, stdout, stderr io.Writer) error {
	return clientCommand(name, help, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		ids, err := parseJobIDs(name, args)
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		jobs, err := eachJob(ctx, ids, func(ctx context.Context, id uint64) (*longfairv1.Job, error) { return call(ctx, c, id) })
		if err != nil {
			return err
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, messages(jobs))
		case "csv":
			return writeTable(out.stdout, "csv", jobsTable(jobs))
		}
		for _, j := range jobs {
			fmt.Fprintln(out.stdout, line(j))
		}
		return nil
	})
}

// eachJob calls call for each job in turn and returns the jobs it
// answered; at the first refusal it stops and returns the jobs done so
// far with the error, which names the job.
func eachJob(ctx context.Context, ids []uint64, call func(context.Context, uint64) (*longfairv1.Job, error)) ([]*longfairv1.Job, error) {
	jobs := make([]*longfairv1.Job, 0, len(ids))
	for _, id := range ids {
		j, err := call(ctx, id)
		if err != nil {
			return jobs, fmt.Errorf("job %d: %w", id, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// parseJobIDs reads the JOB_ID [JOB_ID...] arguments of command name.
func parseJobIDs(name string, args []string) ([]uint64, error) {
	if err := wantArgs(name, args, 1, -1, "JOB_ID [JOB_ID...]"); err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(args))
	for _, a := range args {
		id, err := parseJobID(a)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
