package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const submitHelp = `Usage: longfair submit [flags] -- COMMAND [ARG...]

Submits a job: an array of identical tasks, each holding the resources
asked for while it runs COMMAND with its arguments (a single argument is
shell text, as in 'echo $LONGFAIR_TASK_INDEX > out'), with LONGFAIR_JOB_ID,
LONGFAIR_TASK_INDEX, LONGFAIR_ACCOUNT and LONGFAIR_USER set. The account is
charged; its available service units must cover the worst case (tasks ×
walltime × billing rate), which is held at once and released as tasks end.

The account and user default to $LONGFAIR_ACCOUNT and $LONGFAIR_USER; with
no token on a node with munged (MUNGE), the user is then the one the
servers map the caller's Unix account to, else $USER.

Tasks run in the directory submit ran in (--chdir DIR for another) with the
environment it ran with (--export: ALL, the default; NONE; or a list of
NAME or NAME=value, as sbatch takes it, optionally starting with ALL).
LONGFAIR_TOKEN is never exported. On a cluster whose workers run as root,
tasks run as the user's Unix account ('longfair user set').

Examples:
  longfair submit --account astro --array 100 --cpu 2 --mem 4G --walltime 30m -- ./simulate.sh
  longfair submit --account astro --mic 1 --cpu 4 --walltime 2h --name offload -- ./run-mic
  longfair submit --account bio --repeat 50 --walltime 5m -- sleep 60     # 50 jobs
  longfair submit --account bio --wait -- ./quick-check                   # wait for it to end
  longfair submit --account astro --nodes 2 --cpu 4 -- \
      'mpiexec -launcher rsh -launcher-exec "$LONGFAIR_RSH" -f "$LONGFAIR_HOSTFILE" -n 8 ./a.out'

With --nodes N each task is a parallel job: N nodes, each holding the
resources asked for, allocated together (all or none) and charged and
counted in fairness for all of them. The command runs on the first node
with LONGFAIR_NODELIST, LONGFAIR_NNODES, LONGFAIR_NODEID and
LONGFAIR_HOSTFILE set; 'longfair exec NODE CMD' ($LONGFAIR_RSH) starts
processes on the others. A shape the cluster's nodes could never hold is
refused with the widest that fits.
`

func submitCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		account, user, name, requestID               string
		tasks                                        int64
		nodes                                        int
		ntasks, perNode, cpusPerTask, throttle, nice int
		flags                                        *flag.FlagSet
		walltime                                     time.Duration
		maxAttempts, repeat                          int
		wait, quote, exclusive, hold                 bool
		interval                                     time.Duration
		res                                          resourceFlags
		chdir, export, dependency, begin             string
	)
	setup := func(fs *flag.FlagSet) {
		flags = fs
		fs.StringVar(&account, "account", os.Getenv("LONGFAIR_ACCOUNT"), "`account` charged for the job (default $LONGFAIR_ACCOUNT)")
		fs.StringVar(&user, "user", defaultUser(), "`user` submitting, a member of the account (default $LONGFAIR_USER, else the user of a MUNGE credential, else $USER)")
		fs.Int64Var(&tasks, "array", 1, "number of tasks in the job array (1 to 1000000)")
		fs.Int64Var(&tasks, "a", 1, "short for --array")
		fs.IntVar(&nodes, "nodes", 1, "nodes each task spans, the resources asked for on each (a parallel job, e.g. MPI; see 'longfair exec --help')")
		fs.IntVar(&ntasks, "ntasks", 0, "processes a parallel job runs across its nodes (LONGFAIR_NTASKS; what 'longfair run' starts); with --ntasks-per-node it sets --nodes")
		fs.IntVar(&perNode, "ntasks-per-node", 0, "processes on each node: the nodes are ceil(ntasks / this), each with ntasks-per-node × cpus-per-task cores")
		fs.IntVar(&cpusPerTask, "cpus-per-task", 0, "cores per process with --ntasks (default 1): each node gets processes × this")
		walltime = time.Hour
		fs.Var((*slurmDuration)(&walltime), "walltime", "longest a task may run, 1s to 365 days, as a `duration` (30m, 2h) or in Slurm's formats (minutes, HH:MM:SS, D-HH:MM); it is stopped after")
		fs.StringVar(&name, "name", "", "job `name` for people")
		fs.IntVar(&maxAttempts, "max-attempts", 0, "how often a task lost with its node is started (0: the cluster default, 3)")
		fs.StringVar(&requestID, "request-id", "", "`id` that makes the submission idempotent: submitting again with it returns the first job")
		fs.IntVar(&repeat, "repeat", 1, "submit `N` separate jobs like this one (progress on stderr)")
		fs.BoolVar(&wait, "wait", false, "follow the job until it ends; exit non-zero unless it succeeded")
		fs.BoolVar(&quote, "quote", false, "submit nothing: show the SU hold, the cost per task-hour and when the job could start")
		fs.DurationVar(&interval, "interval", time.Second, "how often --wait looks at the job")
		fs.StringVar(&chdir, "chdir", "", "`dir`ectory the tasks run in (default: the current directory)")
		fs.StringVar(&export, "export", "ALL", "environment the tasks get: ALL, NONE, or `NAME[=value],...` (ALL,NAME=value adds to all)")
		fs.BoolVar(&exclusive, "exclusive", false, "take each node whole: the job gets (and is charged for) whole nodes of the cheapest class that holds what it asks")
		fs.StringVar(&begin, "begin", "", "start no task before this `time`: now+1hour, now+90m, 16:00, 2026-12-01T08:30 (as sbatch reads it)")
		fs.IntVar(&throttle, "throttle", 0, "run at most `N` of the job's tasks at once (sbatch's --array=…%N); 0: no limit")
		fs.BoolVar(&hold, "hold", false, "submit the job held: it starts no task until 'longfair release'")
		fs.IntVar(&nice, "nice", 0, "let your other jobs in the account go first (higher) or go ahead of them (negative: admins only)")
		fs.StringVar(&dependency, "dependency", "", "start only after other jobs: `afterok:ID[:ID...]`, afternotok, afterany, after, singleton; ',' for all, '?' for any; JOB_TASK names an array element")
		res.register(fs)
		for short, long := range map[string]string{"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "t": "walltime", "J": "name", "A": "account", "D": "chdir", "H": "hold", "d": "dependency"} {
			aliasFlag(fs, short, long)
		}
	}
	return clientCommand("submit", submitHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, command []string, out cmdIO) error {
		if command == nil {
			command = args
		} else if len(args) > 0 {
			return Usagef("unexpected argument %q before --: put the command to run after --", args[0])
		}
		if len(command) == 0 {
			return Usagef("no command: put the command each task runs after --, e.g. 'longfair submit --account astro -- ./run.sh'")
		}
		if account == "" {
			return Usagef("no account: give --account (or set LONGFAIR_ACCOUNT)")
		}
		if !given(flags, "user") && os.Getenv("LONGFAIR_USER") == "" && f.mungeAuth() {
			// The credential says who the caller is; $USER need not be
			// its longfair name.
			var err error
			if user, err = mungeUser(ctx, c, f); err != nil {
				return err
			}
		}
		if user == "" {
			return Usagef("no user: give --user (or set LONGFAIR_USER)")
		}
		if repeat < 1 {
			return Usagef("--repeat %d: give 1 or more jobs", repeat)
		}
		if repeat > 1 && (wait || requestID != "") {
			return Usagef("--repeat submits several jobs: it cannot be combined with --wait or --request-id")
		}
		if nodes < 1 {
			return Usagef("--nodes %d: a task spans 1 or more nodes", nodes)
		}
		demand, err := res.demand()
		if err != nil {
			return err
		}
		if nodes, err = parallelShape(nodes, given(flags, "nodes"), ntasks, perNode, cpusPerTask, res.cpu != "", demand); err != nil {
			return err
		}
		dir, err := submitDir(chdir)
		if err != nil {
			return err
		}
		env, dropped, err := exportEnv(export, os.Environ())
		if err != nil {
			return err
		}
		for _, name := range dropped {
			fmt.Fprintf(out.stderr, "longfair submit: not exporting %s: its value holds control characters or invalid UTF-8, which the cluster does not carry\n", name)
		}
		spec := client.JobSpec{Account: account, User: user, Name: name, Demand: demand, Tasks: tasks, Nodes: nodes, Ranks: ntasks,
			Walltime: walltime, Command: command, MaxAttempts: maxAttempts, RequestID: requestID,
			Dir: dir, Env: env, EnvCaptured: true, Exclusive: exclusive, Dependency: dependency, Throttle: throttle, Nice: nice, Hold: hold}
		if spec.Begin, err = parseBegin(begin, time.Now()); err != nil {
			return Usagef("%v", err)
		}
		if quote {
			return quoteJob(ctx, c, f, spec, out)
		}
		if repeat > 1 {
			return submitMany(ctx, c, f, spec, repeat, out)
		}
		cctx, cancel := f.callContext(ctx)
		job, err := c.Submit(cctx, spec)
		cancel()
		if err != nil {
			return err
		}
		if err := printSubmitted(out, f.output, []*longfairv1.Job{job}); err != nil {
			return err
		}
		if !wait {
			return nil
		}
		return watchJob(ctx, c, f, job.GetId(), interval, 0, out)
	})
}

// parallelShape turns Slurm's way of asking for a parallel job — --ntasks
// processes, --ntasks-per-node of them on each node, --cpus-per-task cores
// each — into longfair's nodes and cores per node, as sbatch does: the
// nodes are ceil(ntasks / ntasks-per-node) unless --nodes gives them, and
// each node holds its processes' cores. It returns the nodes, and sets
// demand's cpu. Without --ntasks it changes nothing.
func parallelShape(nodes int, nodesSet bool, ntasks, perNode, cpusPerTask int, cpuSet bool, demand map[string]float64) (int, error) {
	if ntasks == 0 && perNode == 0 && cpusPerTask == 0 {
		return nodes, nil
	}
	switch {
	case ntasks < 1:
		return 0, Usagef("--ntasks-per-node and --cpus-per-task need --ntasks (1 or more processes)")
	case perNode < 0 || cpusPerTask < 0:
		return 0, Usagef("--ntasks-per-node and --cpus-per-task must be 1 or more")
	case cpuSet:
		return 0, Usagef("--cpu and --ntasks both set the cores per node: give --cpus-per-task (cores per process) instead of --cpu")
	}
	if cpusPerTask == 0 {
		cpusPerTask = 1
	}
	switch {
	case perNode > 0 && !nodesSet:
		nodes = (ntasks + perNode - 1) / perNode
	case perNode > 0 && ntasks > nodes*perNode:
		return 0, Usagef("--ntasks %d does not fit --nodes %d × --ntasks-per-node %d: give more nodes, or leave --nodes out", ntasks, nodes, perNode)
	case perNode == 0 && !nodesSet:
		return 0, Usagef("--ntasks %d: say how to spread them, with --nodes N or --ntasks-per-node P", ntasks)
	case perNode == 0:
		perNode = (ntasks + nodes - 1) / nodes
	}
	if ntasks < nodes {
		return 0, Usagef("--ntasks %d is fewer than the %d nodes: every node runs at least one process", ntasks, nodes)
	}
	demand["cpu"] = float64(perNode * cpusPerTask)
	return nodes, nil
}

// given reports whether flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// quoteJob shows what submitting spec would do, submitting nothing.
func quoteJob(ctx context.Context, c *client.Client, f *clientFlags, spec client.JobSpec, out cmdIO) error {
	cctx, cancel := f.callContext(ctx)
	defer cancel()
	// The leader forecasts over the nodes its passes use.
	q, err := c.Jobs().QuoteJob(client.ConsistentRead(cctx), spec.Request())
	if err != nil {
		return err
	}
	if f.output == "json" {
		return writeJSON(out.stdout, q)
	}
	shape := fmtVector(q.GetDemand())
	if n := q.GetNodes(); n > 1 {
		shape = fmt.Sprintf("%d nodes × %s", n, shape)
	}
	if q.GetRefusal() != "" && q.GetDemand() == nil {
		return fmt.Errorf("the job would be refused: %s", q.GetRefusal())
	}
	fmt.Fprintf(out.stdout, "quote for %d task(s) of %s, walltime %s, account %s (nothing submitted):\n", q.GetTasks(), shape, fmtDuration(spec.Request().GetWalltime()), spec.Account)
	fmt.Fprintf(out.stdout, "  hold       %s SU: what one run of each task can cost at most, held at submission and released as tasks end (a rerun after a lost node, or a requeue, holds what the stopped run cost)\n", fmtSU(q.GetHoldMicroSu()))
	fmt.Fprintf(out.stdout, "  cost       %s SU per task-hour it runs\n", fmtSU(q.GetTaskHourlyMicroSu()))
	fmt.Fprintf(out.stdout, "  available  %s SU in %s now\n", fmtSU(q.GetAvailableMicroSu()), spec.Account)
	start := "unknown: running tasks' ends do not free enough nodes (tasks without a walltime, or nodes that are down)"
	switch {
	case q.GetWait() == longfairv1.JobWait_JOB_WAIT_ROOM && q.GetRank() == 1:
		start = "now: there is room, and its account ranks first"
	case q.GetReserved():
		start = fmt.Sprintf("by %s, reserved: it would be the first ranked job that cannot start", fmtTime(q.GetForecastStart()))
	case q.GetForecastStart() != nil:
		start = fmt.Sprintf("by %s if no job ranked before it takes the room first (rank %d of %d)", fmtTime(q.GetForecastStart()), q.GetRank(), q.GetRankedAccounts())
	}
	fmt.Fprintf(out.stdout, "  start      %s\n", start)
	if r := q.GetRefusal(); r != "" {
		return fmt.Errorf("the job would be refused now: %s", r)
	}
	return nil
}

// submitMany submits n copies of spec, showing progress, and lists them.
func submitMany(ctx context.Context, c *client.Client, f *clientFlags, spec client.JobSpec, n int, out cmdIO) error {
	p := newProgress(out.stderr, "submitting", int64(n), "jobs")
	var jobs []*longfairv1.Job
	for i := range n {
		cctx, cancel := f.callContext(ctx)
		job, err := c.Submit(cctx, spec)
		cancel()
		if err != nil {
			p.done()
			if len(jobs) > 0 {
				_ = printSubmitted(out, f.output, jobs)
			}
			return fmt.Errorf("job %d of %d: %w (the %d before it were submitted)", i+1, n, err, len(jobs))
		}
		jobs = append(jobs, job)
		p.set(int64(len(jobs)))
	}
	p.done()
	return printSubmitted(out, f.output, jobs)
}

func printSubmitted(out cmdIO, format string, jobs []*longfairv1.Job) error {
	if format == "json" {
		if len(jobs) == 1 {
			return writeJSON(out.stdout, jobs[0])
		}
		return writeJSON(out.stdout, messages(jobs))
	}
	if format == "csv" {
		return writeTable(out.stdout, "csv", jobsTable(jobs))
	}
	for _, j := range jobs {
		shape := fmtVector(j.GetDemand())
		if n := j.GetNodes(); n > 1 {
			shape = fmt.Sprintf("%d nodes × %s", n, shape)
		}
		fmt.Fprintf(out.stdout, "submitted job %d: %d task(s) of %s, walltime %s, account %s; %s SU held\n",
			j.GetId(), j.GetTasks(), shape, fmtDuration(j.GetWalltime()), j.GetAccount(), fmtSU(j.GetHoldMicroSu()))
	}
	return nil
}

func defaultUser() string {
	if u := os.Getenv("LONGFAIR_USER"); u != "" {
		return u
	}
	return strings.TrimSpace(os.Getenv("USER"))
}
