package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const jobsHelp = `Usage: longfair jobs [flags]

Lists jobs, newest first, with their task counts by state. --since and
--until keep the jobs that were queued or running at some time between
them (as sacct -S and -E select them), in the same forms.

Examples:
  longfair jobs
  longfair jobs --account astro --state pending,running
  longfair jobs --user ann --all --output csv > ann-jobs.csv
  longfair jobs --since 2026-11-01 --until 2026-12-01 --all
`

func jobsCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		account, user, states string
		since, until          string
		limit                 int
		all                   bool
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only this `account`'s jobs")
		fs.StringVar(&user, "user", "", "only this `user`'s jobs")
		fs.StringVar(&states, "state", "", "only jobs in these `states`, comma-separated: pending, running, succeeded, failed, cancelled")
		fs.StringVar(&since, "since", "", "only jobs queued or running at or after this `time` (2026-11-01, 08:00, now-2days, ...)")
		fs.StringVar(&until, "until", "", "only jobs submitted at or before this `time`")
		fs.IntVar(&limit, "limit", 50, "list at most `N` jobs")
		fs.BoolVar(&all, "all", false, "list every job (no --limit)")
	}
	return clientCommand("jobs", jobsHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if len(args) > 0 {
			return Usagef("unexpected argument %q: to see one job use 'longfair job show %s'", args[0], args[0])
		}
		req := &longfairv1.ListJobsRequest{Account: account, User: user}
		for _, s := range strings.Split(states, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			st, err := client.ParseJobState(s)
			if err != nil {
				return Usagef("--state: %v", err)
			}
			req.States = append(req.States, st)
		}
		now := time.Now()
		for _, w := range []struct {
			flag, value string
			into        **timestamppb.Timestamp
		}{{"since", since, &req.Since}, {"until", until, &req.Until}} {
			if w.value == "" {
				continue
			}
			t, err := parseSacctTime(w.flag, w.value, now)
			if err != nil {
				return err
			}
			*w.into = storable(t)
		}
		if req.Since != nil && req.Until != nil && req.Until.AsTime().Before(req.Since.AsTime()) {
			return Usagef("--until %s is before --since %s: give an end after the start", until, since)
		}
		if limit < 1 && !all {
			return Usagef("--limit %d: give 1 or more, or --all", limit)
		}
		if !all {
			// Pages of what it shows: the newest 50 are one page of 50.
			req.PageSize = int32(min(limit, longfairv1.MaxPageSize))
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var jobs []*longfairv1.Job
		for j, err := range c.AllJobs(ctx, req) {
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
			if !all && len(jobs) >= limit {
				break
			}
		}
		return writeListing(out.stdout, f.output, jobsTable(jobs), messages(jobs))
	})
}

func jobsTable(jobs []*longfairv1.Job) table {
	t := table{header: []string{"ID", "ACCOUNT", "USER", "NAME", "STATE", "TASKS", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "DEMAND", "WALLTIME", "SUBMITTED", "CHARGED_SU"}}
	for _, j := range jobs {
		t.add(strconv.FormatUint(j.GetId(), 10), j.GetAccount(), j.GetUser(), orDash(j.GetName()), client.StateName(j.GetState()),
			fmt.Sprint(j.GetTasks()), fmt.Sprint(j.GetPendingTasks()), fmt.Sprint(j.GetRunningTasks()), fmt.Sprint(j.GetSucceededTasks()),
			fmt.Sprint(j.GetFailedTasks()), fmt.Sprint(j.GetCancelledTasks()), fmtVector(j.GetDemand()), fmtDuration(j.GetWalltime()),
			fmtTime(j.GetSubmittedAt()), fmtSU(j.GetChargedMicroSu()))
	}
	return t
}

func parseJobID(s string) (uint64, error) {
	id, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || id == 0 {
		return 0, Usagef("job id %q is not a job number (as 'longfair jobs' lists them)", s)
	}
	return id, nil
}

const jobShowHelp = `Usage: longfair job show JOB_ID [flags]

Shows one job and the latest attempt of each task that has been placed.

Example:
  longfair job show 12
  longfair job show 12 --output json | jq '.tasks[] | select(.state == "TASK_STATE_FAILED")'
`

func jobShowCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("job show", jobShowHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("job show", args, 1, 1, "JOB_ID"); err != nil {
			return err
		}
		id, err := parseJobID(args[0])
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		job, err := c.Jobs().GetJob(ctx, &longfairv1.GetJobRequest{JobId: id})
		if err != nil {
			return err
		}
		tasks, err := collectTasks(ctx, id, c.AllTasks)
		if err != nil {
			return err
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, jsonObject{{"job", job}, {"tasks", messages(tasks)}})
		case "csv":
			return writeTable(out.stdout, "csv", tasksTable(job, tasks))
		}
		printJob(out.stdout, job, tasks)
		if len(tasks) == 0 {
			fmt.Fprintln(out.stdout, "\nno task has been placed yet")
			return nil
		}
		fmt.Fprintln(out.stdout)
		return writeTable(out.stdout, "table", tasksTable(job, tasks))
	})
}

func printJob(w io.Writer, j *longfairv1.Job, tasks []*longfairv1.Task) {
	name := ""
	if j.GetName() != "" {
		// Quoted, not %q: the reply is escaped already (escapeReplies),
		// and escaping it twice would double its backslashes.
		name = ` "` + j.GetName() + `"`
	}
	fmt.Fprintf(w, "job %d%s: %s\n", j.GetId(), name, client.StateName(j.GetState()))
	t := table{header: []string{"", ""}}
	t.add("account", fmt.Sprintf("%s (user %s)", j.GetAccount(), j.GetUser()))
	t.add("tasks", fmt.Sprintf("%d: %s", j.GetTasks(), taskCounts(j)))
	per := "per task"
	if n := j.GetNodes(); n > 1 {
		per = fmt.Sprintf("on each of %d nodes per task", n)
		if r := j.GetNtasks(); r > 0 {
			per += fmt.Sprintf(" (%d processes)", r)
		}
	}
	if j.GetExclusive() {
		per += ", whole nodes"
	}
	t.add("demand", fmt.Sprintf("%s %s, walltime %s, max attempts %d", fmtVector(j.GetDemand()), per, fmtDuration(j.GetWalltime()), j.GetMaxAttempts()))
	t.add("command", strings.Join(j.GetCommand(), " "))
	if d := j.GetDependency(); d != "" {
		state := "met"
		if w := j.GetWaiting(); w != "" {
			state = "waiting for " + w
		}
		t.add("dependency", d+" ("+state+")")
	}
	if r := j.GetReason(); r != "" {
		t.add("reason", r)
	}
	if b := j.GetBegin(); b != nil {
		t.add("begin", fmtTime(b))
	}
	if n := j.GetArrayThrottle(); n > 0 {
		t.add("throttle", fmt.Sprintf("at most %d tasks at once", n))
	}
	if j.GetHeld() {
		t.add("held", fmt.Sprintf("yes: no task starts until 'longfair release %d'", j.GetId()))
	}
	if n := j.GetPriority(); n != 0 {
		t.add("priority", fmt.Sprint(n))
	}
	if n := j.GetNice(); n != 0 {
		t.add("nice", fmt.Sprint(n))
	}
	t.add("submitted", fmtTime(j.GetSubmittedAt()))
	if j.GetEndedAt() != nil {
		t.add("ended", fmtTime(j.GetEndedAt()))
	}
	t.add("SU", fmt.Sprintf("%s held at submission, %s charged", fmtSU(j.GetHoldMicroSu()), fmtSU(j.GetChargedMicroSu())))
	if cpu, mem, ok := jobUsage(j, tasks); ok {
		t.add("cpu used", cpu)
		t.add("mem used", mem)
	}
	t.header = nil
	var b strings.Builder
	_ = writeTable(&b, "table", t)
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			fmt.Fprintln(w, "  "+strings.TrimLeft(line, " "))
		}
	}
}

func taskCounts(j *longfairv1.Job) string {
	return fmt.Sprintf("%d pending, %d running, %d succeeded, %d failed, %d cancelled",
		j.GetPendingTasks(), j.GetRunningTasks(), j.GetSucceededTasks(), j.GetFailedTasks(), j.GetCancelledTasks())
}

// taskNodes is the NODE of a task: its node, or a parallel task's nodes,
// its head first ("w1,w2,w3").
func taskNodes(k *longfairv1.Task) string {
	if len(k.GetNodes()) > 1 {
		return strings.Join(k.GetNodes(), ",")
	}
	return orDash(k.GetNode())
}

func tasksTable(job *longfairv1.Job, tasks []*longfairv1.Task) table {
	t := table{header: []string{"TASK", "ATTEMPT", "STATE", "NODE", "ASSIGNED", "STARTED", "ENDED", "EXIT", "RUNTIME", "CHARGED_SU", "CPU_EFF", "MEM_PEAK", "REASON"}}
	for _, k := range tasks {
		exit := "-"
		if k.GetEndedAt() != nil {
			exit = fmt.Sprint(k.GetExitCode())
		}
		t.add(fmt.Sprintf("%d.%d", k.GetJobId(), k.GetIndex()), fmt.Sprint(k.GetAttempt()), client.TaskStateName(k.GetState()), taskNodes(k),
			fmtTime(k.GetAssignedAt()), fmtTime(k.GetStartedAt()), fmtTime(k.GetEndedAt()), exit, fmtDuration(k.GetRuntime()), fmtSU(k.GetChargedMicroSu()),
			cpuEfficiency(job, k), memPeak(k), orDash(taskReason(job, k)))
	}
	return t
}

// taskReason is why an attempt ended when it was not its own doing, and
// the walltime it kept when its job's was lowered after it was placed,
// which its charge may reach.
func taskReason(job *longfairv1.Job, k *longfairv1.Task) string {
	var parts []string
	if r := k.GetReason(); r != "" {
		parts = append(parts, r)
	}
	if w := k.GetWalltime(); w != nil && job.GetWalltime() != nil && w.AsDuration() != job.GetWalltime().AsDuration() {
		parts = append(parts, fmt.Sprintf("kept the walltime of %v it was sent (the job's was lowered later)", w.AsDuration()))
	}
	return strings.Join(parts, "; ")
}

const jobWatchHelp = `Usage: longfair job watch JOB_ID [flags]

Follows a job until it ends, printing a line each time its state or task
counts change (with --output json, one JSON object per line). Exits 0 when
the job succeeded and 1 when it failed or was cancelled, so scripts can
wait on it.

Example:
  longfair job watch 12
  longfair job watch 12 --max-wait 10m --output json
`

func jobWatchCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		interval, maxWait time.Duration
	)
	setup := func(fs *flag.FlagSet) {
		fs.DurationVar(&interval, "interval", time.Second, "how often to look at the job")
		fs.DurationVar(&maxWait, "max-wait", 0, "give up after this long (0: wait until the job ends or Ctrl-C)")
	}
	return clientCommand("job watch", jobWatchHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("job watch", args, 1, 1, "JOB_ID"); err != nil {
			return err
		}
		id, err := parseJobID(args[0])
		if err != nil {
			return err
		}
		return watchJob(ctx, c, f, id, interval, maxWait, out)
	})
}

// watchJob prints a job's changes until it ends.
func watchJob(ctx context.Context, c *client.Client, f *clientFlags, id uint64, interval, maxWait time.Duration, out cmdIO) error {
	if maxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxWait)
		defer cancel()
	}
	if f.output == "csv" {
		fmt.Fprintln(out.stdout, "TIME,JOB,STATE,PENDING,RUNNING,SUCCEEDED,FAILED,CANCELLED,TASKS")
	}
	job, err := c.WaitJob(ctx, id, interval, func(j *longfairv1.Job) {
		switch f.output {
		case "json":
			_ = writeJSONLine(out.stdout, j)
		case "csv":
			fmt.Fprintf(out.stdout, "%s,%d,%s,%d,%d,%d,%d,%d,%d\n", time.Now().Format(time.RFC3339), j.GetId(), client.StateName(j.GetState()),
				j.GetPendingTasks(), j.GetRunningTasks(), j.GetSucceededTasks(), j.GetFailedTasks(), j.GetCancelledTasks(), j.GetTasks())
		default:
			fmt.Fprintf(out.stdout, "%s job %d %s: %s of %d\n", time.Now().Format("15:04:05"), j.GetId(), client.StateName(j.GetState()), taskCounts(j), j.GetTasks())
		}
	})
	switch {
	case errors.Is(err, client.ErrJobNotSucceeded):
		return fmt.Errorf("job %d ended %s: %d of %d tasks succeeded, %d failed, %d cancelled",
			id, client.StateName(job.GetState()), job.GetSucceededTasks(), job.GetTasks(), job.GetFailedTasks(), job.GetCancelledTasks())
	case errors.Is(err, context.DeadlineExceeded) && maxWait > 0 && job != nil:
		return fmt.Errorf("job %d is still %s after --max-wait %v", id, client.StateName(job.GetState()), maxWait)
	}
	return err
}

const cancelHelp = `Usage: longfair cancel JOB_ID [JOB_ID...] [flags]

Cancels jobs: their pending tasks never start and their running tasks are
stopped and charged for the time they ran. The unused SU hold is released.
Cancelling a cancelled job changes nothing.

Example:
  longfair cancel 12
  longfair cancel 12 13 14
`

func cancelCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("cancel", cancelHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		ids, err := parseJobIDs("cancel", args)
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		jobs, err := eachJob(ctx, ids, c.Cancel)
		if err != nil {
			if len(jobs) > 0 {
				_ = printCancelled(out, f.output, jobs)
			}
			return err
		}
		return printCancelled(out, f.output, jobs)
	})
}

func printCancelled(out cmdIO, format string, jobs []*longfairv1.Job) error {
	switch format {
	case "json":
		if len(jobs) == 1 {
			return writeJSON(out.stdout, jobs[0])
		}
		return writeJSON(out.stdout, messages(jobs))
	case "csv":
		return writeTable(out.stdout, "csv", jobsTable(jobs))
	}
	for _, j := range jobs {
		if client.JobEnded(j) {
			fmt.Fprintf(out.stdout, "job %d is %s: %d task(s) cancelled before they started\n", j.GetId(), client.StateName(j.GetState()), j.GetCancelledTasks())
			continue
		}
		fmt.Fprintf(out.stdout, "job %d cancelled: %d pending task(s) will not start, %d running task(s) are being stopped\n", j.GetId(), j.GetCancelledTasks(), j.GetRunningTasks())
	}
	return nil
}
