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
	return clientCommand(name, help, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		ids, err := parseJobIDs(name, args)
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var jobs []*longfairv1.Job
		for _, id := range ids {
			var j *longfairv1.Job
			var err error
			if hold {
				j, err = c.Jobs().HoldJob(ctx, &longfairv1.HoldJobRequest{JobId: id})
			} else {
				j, err = c.Jobs().ReleaseJob(ctx, &longfairv1.ReleaseJobRequest{JobId: id})
			}
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
			state := "released: its tasks may start"
			if j.GetHeld() {
				state = fmt.Sprintf("held: no more of its tasks start until 'longfair release %d' (%d running go on)", j.GetId(), j.GetRunningTasks())
			}
			fmt.Fprintf(out.stdout, "job %d %s\n", j.GetId(), state)
		}
		return nil
	})
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
