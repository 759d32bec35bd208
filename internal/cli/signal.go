package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/core"
)

const signalHelp = `Usage: longfair signal JOB_ID [JOB_ID...] [flags]

Sends a signal to every process of the jobs' running tasks, on every node
they hold, as Slurm's 'scancel --signal' does: a task that traps it (say,
to write a checkpoint) goes on; one that does not ends as that signal
ends a process, and is charged for the time it ran. Tasks that start
later do not get it. Users signal their own jobs, admins any.

Signals: ` + "HUP INT QUIT KILL USR1 USR2 ALRM TERM CONT STOP TSTP" + ` (by name, with or
without SIG, or by number; default USR1).

Example:
  longfair signal --signal USR1 12
  longfair signal -s SIGTERM 12 13
`

func signalCommand() func(args []string, stdout, stderr io.Writer) error {
	var sig string
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&sig, "signal", "USR1", "the `signal` to send, by name or number")
		fs.StringVar(&sig, "s", "USR1", "short for --signal")
	}
	return clientCommand("signal", signalHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		ids, err := parseJobIDs("signal", args)
		if err != nil {
			return err
		}
		if _, err := core.ParseSignal(sig); err != nil {
			return Usagef("%v", err)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var sent []*longfairv1.SignalJobResponse
		for _, id := range ids {
			r, err := c.Jobs().SignalJob(ctx, &longfairv1.SignalJobRequest{JobId: id, Signal: sig})
			if err != nil {
				return fmt.Errorf("job %d: %w", id, err)
			}
			sent = append(sent, r)
			if f.output == "" || f.output == "table" {
				fmt.Fprintf(out.stdout, "job %d: SIG%s sent to %d running task(s): %s\n", id, core.SignalName(int(r.GetSignal())), len(r.GetTasks()), indexRanges(r.GetTasks()))
			}
		}
		if f.output == "json" {
			return writeJSON(out.stdout, messages(sent))
		}
		return nil
	})
}
