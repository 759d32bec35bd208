package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const updateHelp = `Usage: longfair update JOB_ID [flags]

Changes a job that has not ended, as scontrol update does: its name, a
lower walltime (for the tasks placed after; those already placed keep
theirs), its dependency (--dependency '' clears it; one that would make a
cycle is refused), its array throttle and its nice (negative for admins).
Users update their own jobs, admins any. An admin may also set its
--priority: a boost over the fair order, across accounts (Slurm's
scontrol update priority=); the job goes before every job with a lower
priority, and fairness still counts what it uses. --priority 0 removes it.

Example:
  longfair update 12 --walltime 30m --throttle 8
  longfair update 13 --dependency afterany:12
  longfair update 14 --priority 100
`

func updateCommand() func(args []string, stdout, stderr io.Writer) error {
	var name, dependency string
	var walltime time.Duration
	var throttle, nice, priority int
	var fs *flag.FlagSet
	setup := func(f *flag.FlagSet) {
		fs = f
		f.StringVar(&name, "name", "", "the job's new `name`")
		f.DurationVar(&walltime, "walltime", 0, "a lower walltime for the tasks placed after, e.g. 30m")
		f.StringVar(&dependency, "dependency", "", "the job's new dependency (afterok:ID…); '' clears it")
		f.IntVar(&throttle, "throttle", 0, "at most `N` of its tasks at once; 0: no limit")
		f.IntVar(&nice, "nice", 0, "its order among the account's pending jobs")
		f.IntVar(&priority, "priority", 0, "admins: a boost over the fair order, across accounts; 0 removes it")
	}
	return clientCommand("update", updateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("update", args, 1, 1, "JOB_ID"); err != nil {
			return err
		}
		id, err := parseJobID(args[0])
		if err != nil {
			return err
		}
		req := &longfairv1.UpdateJobRequest{JobId: id}
		if given(fs, "name") {
			req.Name = &name
		}
		if given(fs, "walltime") {
			req.Walltime = durationpb.New(walltime)
		}
		if given(fs, "dependency") {
			req.Dependency = &dependency
		}
		if given(fs, "throttle") {
			n := int32(throttle)
			req.ArrayThrottle = &n
		}
		if given(fs, "nice") {
			n := int32(nice)
			req.Nice = &n
		}
		if given(fs, "priority") {
			n := int32(priority)
			req.Priority = &n
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		j, err := c.Jobs().UpdateJob(ctx, req)
		if err != nil {
			return err
		}
		if f.output == "json" {
			return writeJSON(out.stdout, j)
		}
		fmt.Fprintf(out.stdout, "job %d updated\n", j.GetId())
		printJob(out.stdout, j, nil)
		return nil
	})
}
