package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func limitsGroup() *cmdGroup {
	return group("limits", "Limits on what an account or a user runs and submits (QOS).", []subcommand{
		{"set", "set an account's or a user's limits", limitsSetCommand(), nil},
	})
}

const limitsSetHelp = `Usage: longfair limits set (--account NAME | --user NAME) [limits]

Replaces the limits of an account (all its users' work in it together) or
of a user (their work in every account); a limit left out, or 0, is no
limit, so 'longfair limits set --account phys' lifts them all. A
submission over --max-jobs (jobs not ended), --max-walltime (a task's) or
--max-job-su (a job's SU hold) is refused, naming the limit; tasks over
--max-running-tasks or --max-running-nodes wait, and 'longfair explain'
names the limit. Admins only. 'longfair account list' and 'longfair user
list' show them.

Example:
  longfair limits set --account phys --max-running-tasks 500 --max-walltime 48h
  longfair limits set --user ann --max-jobs 1000 --max-job-su 2000
`

func limitsSetCommand() func(args []string, stdout, stderr io.Writer) error {
	var account, user, jobSU string
	var maxJobs, tasks, nodes int
	var walltime time.Duration
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "the `account` whose limits these are")
		fs.StringVar(&user, "user", "", "the `user` whose limits these are")
		fs.IntVar(&maxJobs, "max-jobs", 0, "jobs submitted and not ended, at most")
		fs.DurationVar(&walltime, "max-walltime", 0, "a task's walltime, at most, e.g. 48h")
		fs.StringVar(&jobSU, "max-job-su", "", "a job's SU hold (its worst-case cost), at most")
		fs.IntVar(&tasks, "max-running-tasks", 0, "tasks running at once, at most")
		fs.IntVar(&nodes, "max-running-nodes", 0, "nodes the running tasks span, at most")
	}
	return clientCommand("limits set", limitsSetHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("limits set", args, 0, 0, ""); err != nil {
			return err
		}
		l := &longfairv1.Limits{MaxJobs: int32(maxJobs), MaxRunningTasks: int32(tasks), MaxRunningNodes: int32(nodes)}
		if walltime != 0 {
			l.MaxWalltime = durationpb.New(walltime)
		}
		if jobSU != "" {
			su, err := client.ParseSU(jobSU)
			if err != nil {
				return Usagef("--max-job-su: %v", err)
			}
			l.MaxJobMicroSu = su
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		set, err := c.Accounts().SetLimits(ctx, &longfairv1.SetLimitsRequest{Account: account, User: user, Limits: l})
		if err != nil {
			return err
		}
		who := "account " + account
		if user != "" {
			who = "user " + user
		}
		if f.output == "json" {
			return writeJSON(out.stdout, set)
		}
		fmt.Fprintf(out.stdout, "%s: %s\n", who, describeLimits(set))
		return nil
	})
}

// describeLimits words limits for people: "none" or "max-jobs 10, …".
func describeLimits(l *longfairv1.Limits) string {
	var parts []string
	if n := l.GetMaxJobs(); n > 0 {
		parts = append(parts, fmt.Sprintf("max-jobs %d", n))
	}
	if d := l.GetMaxWalltime(); d != nil {
		parts = append(parts, "max-walltime "+fmtDuration(d))
	}
	if n := l.GetMaxJobMicroSu(); n > 0 {
		parts = append(parts, "max-job-su "+fmtSU(n))
	}
	if n := l.GetMaxRunningTasks(); n > 0 {
		parts = append(parts, fmt.Sprintf("max-running-tasks %d", n))
	}
	if n := l.GetMaxRunningNodes(); n > 0 {
		parts = append(parts, fmt.Sprintf("max-running-nodes %d", n))
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return strings.Join(parts, ", ")
}
