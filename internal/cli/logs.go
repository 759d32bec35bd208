package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const logsHelp = `Usage: longfair logs TASK [flags]

Prints a task's output (stdout, or stderr with --stderr) as its worker
kept it, fetched through the servers from the node it ran on. TASK is
JOB_ID.INDEX, as 'longfair job show' lists tasks.

Examples:
  longfair logs 12.0
  longfair logs 12.3 --stderr
  longfair logs 12.3 --follow          # until the task ends
`

// parseTaskRef reads JOB_ID.INDEX (or JOB_ID/INDEX).
func parseTaskRef(s string) (uint64, int64, error) {
	sep := strings.IndexAny(s, "./")
	if sep < 0 {
		return 0, 0, Usagef("task %q is not JOB_ID.INDEX (for example 12.0)", s)
	}
	job, err := parseJobID(s[:sep])
	if err != nil {
		return 0, 0, err
	}
	idx, err := strconv.ParseInt(s[sep+1:], 10, 64)
	if err != nil || idx < 0 {
		return 0, 0, Usagef("task index %q is not a number from 0 (tasks of a job are numbered from 0)", s[sep+1:])
	}
	return job, idx, nil
}

func logsCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		stderrStream, follow bool
		attempt              int
	)
	setup := func(fs *flag.FlagSet) {
		fs.BoolVar(&stderrStream, "stderr", false, "print the task's stderr instead of its stdout")
		fs.BoolVar(&follow, "follow", false, "keep printing output while the task runs; end when it ends")
		fs.BoolVar(&follow, "f", false, "short for --follow")
		fs.IntVar(&attempt, "attempt", 0, "which attempt of a task that was retried (0: the latest)")
	}
	return clientCommand("logs", logsHelp, false, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("logs", args, 1, 1, "TASK"); err != nil {
			return err
		}
		jobID, index, err := parseTaskRef(args[0])
		if err != nil {
			return err
		}
		if attempt < 0 {
			return Usagef("--attempt %d: give 1 or more, or 0 for the latest", attempt)
		}
		req := &longfairv1.ReadTaskOutputRequest{JobId: jobID, Task: index, Attempt: int32(attempt), Stream: longfairv1.OutputStream_OUTPUT_STREAM_STDOUT, Follow: follow}
		if stderrStream {
			req.Stream = longfairv1.OutputStream_OUTPUT_STREAM_STDERR
		}
		if !follow {
			var cancel context.CancelFunc
			ctx, cancel = f.callContext(ctx)
			defer cancel()
		}
		jctx, cancel := f.callContext(ctx)
		job, err := c.Jobs().GetJob(jctx, &longfairv1.GetJobRequest{JobId: jobID})
		cancel()
		if err != nil {
			return err
		}
		if index >= job.GetTasks() {
			return Usagef("job %d has tasks 0 to %d: there is no task %d", jobID, job.GetTasks()-1, index)
		}
		stream, err := longfairv1.NewWorkersClient(c.Conn()).ReadTaskOutput(ctx, req)
		if err != nil {
			return logsError(err, jobID, index)
		}
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				if follow && ctx.Err() != nil {
					return nil
				}
				return logsError(err, jobID, index)
			}
			if _, err := out.stdout.Write(chunk.GetData()); err != nil {
				return err
			}
		}
	})
}

// logsError adds what to do when the output cannot be read.
func logsError(err error, job uint64, index int64) error {
	switch status.Code(err) {
	case codes.Unimplemented:
		return fmt.Errorf("the servers cannot read task output yet (no Workers.ReadTaskOutput): look in the work dir of the worker that ran task %d.%d ('longfair job show %d' names the node)", job, index, job)
	case codes.NotFound, codes.FailedPrecondition:
		return fmt.Errorf("task %d.%d: %w ('longfair job show %d' lists its attempts, 'longfair explain %d' says why a task has not started)", job, index, err, job, job)
	}
	return err
}
