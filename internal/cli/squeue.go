package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/core"
)

const squeueHelp = `Usage: longfair squeue [flags]

The queue as Slurm's squeue shows it: pending and running jobs, a line per
running array element (12_3) and one for an array's elements still to run
(12_[4-9]). A pending line's reason comes from the scheduler, as 'longfair
explain' gives it: Priority (accounts ranked before it go first),
Resources (it is first and waits for nodes to free up), Dependency,
JobHeldUser, BeginTime, JobArrayTaskLimit (its throttle), AssocMaxJobsLimit
(a running limit), ReqNodeNotAvail (no node up) or BadConstraints (no node
could ever hold it). Users see their own accounts' jobs, admins all.

--format takes Slurm's %-specifiers, each with an optional width (%.18i
right-justified, %-10j left): %i job id, %A job id without the element,
%K array index, %j name, %u user, %a account, %P partition (the account:
longfair has none), %t state code (PD, R), %T state, %M time used, %l time
limit, %D nodes, %C cores, %m memory per node, %R nodes or (reason), %r
reason, %V submitted, %S started, %Q priority (an admin's boost), %%.

Example:
  longfair squeue -u ann
  longfair squeue -t PD -o "%.10i %.9P %.20j %.8T %r"
`

// squeueDefaultFormat is Slurm's default.
const squeueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"

// maxExplained bounds the pending jobs whose reason is asked of the
// scheduler (in one ExplainJobs call); the rest say Priority.
const maxExplained = 200

// queueRow is one line: a job, a running element, or an array's elements
// still to run.
type queueRow struct {
	acctRow
	reason string
}

// squeueSpec is one %-specifier of --format, or literal text.
type squeueSpec struct {
	literal string
	verb    byte
	width   int
	left    bool
}

// parseSqueueFormat reads a Slurm --format string.
func parseSqueueFormat(s string) ([]squeueSpec, error) {
	var out []squeueSpec
	for i := 0; i < len(s); {
		if s[i] != '%' {
			j := strings.IndexByte(s[i:], '%')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, squeueSpec{literal: s[i : i+j]})
			i += j
			continue
		}
		i++
		spec := squeueSpec{left: true}
		if i < len(s) && s[i] == '.' {
			spec.left = false
			i++
		} else if i < len(s) && s[i] == '-' {
			i++
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i {
			w, err := strconv.Atoi(s[i:j])
			if err != nil || w > 1000 {
				return nil, Usagef("--format: width %q is too large: give at most 1000", s[i:j])
			}
			spec.width = w
		}
		if j >= len(s) {
			return nil, Usagef("--format %q ends inside a %%-specifier: end it with a letter such as %%i", s)
		}
		spec.verb = s[j]
		if spec.verb == '%' {
			out = append(out, squeueSpec{literal: "%"})
		} else if _, ok := squeueVerbs()[spec.verb]; !ok {
			return nil, Usagef("--format: %%%c is not a field: use %%i %%A %%K %%j %%u %%a %%P %%t %%T %%M %%l %%D %%C %%m %%R %%r %%V %%S %%Q", spec.verb)
		} else {
			out = append(out, spec)
		}
		i = j + 1
	}
	return out, nil
}

// squeueVerbs are the fields of --format, with their header.
func squeueVerbs() map[byte]struct {
	header string
	value  func(r *queueRow) string
} {
	type field = struct {
		header string
		value  func(r *queueRow) string
	}
	return map[byte]field{
		'i': {"JOBID", func(r *queueRow) string { return r.id }},
		'A': {"ARRAY_JOB_ID", func(r *queueRow) string { return strconv.FormatUint(r.job.GetId(), 10) }},
		'K': {"ARRAY_TASK_ID", func(r *queueRow) string {
			_, idx, ok := strings.Cut(r.id, "_")
			if !ok {
				return "N/A"
			}
			return idx
		}},
		'j': {"NAME", func(r *queueRow) string { return r.job.GetName() }},
		'u': {"USER", func(r *queueRow) string { return r.job.GetUser() }},
		'a': {"ACCOUNT", func(r *queueRow) string { return r.job.GetAccount() }},
		'P': {"PARTITION", func(r *queueRow) string { return r.job.GetAccount() }},
		't': {"ST", func(r *queueRow) string { return queueStateCode(r.state) }},
		'T': {"STATE", func(r *queueRow) string { return r.state }},
		'M': {"TIME", func(r *queueRow) string { return squeueTime(r.elapsed()) }},
		'l': {"TIME_LIMIT", func(r *queueRow) string { return squeueTime(r.job.GetWalltime().AsDuration()) }},
		'D': {"NODES", func(r *queueRow) string { return strconv.Itoa(r.nodes()) }},
		'C': {"CPUS", func(r *queueRow) string { return r.cpus(false) }},
		'm': {"MIN_MEMORY", func(r *queueRow) string { return client.FormatBytes(r.job.GetDemand()["mem"]) }},
		'R': {"NODELIST(REASON)", func(r *queueRow) string {
			if r.task != nil {
				return r.nodeList()
			}
			return "(" + r.reason + ")"
		}},
		'r': {"REASON", func(r *queueRow) string {
			if r.task != nil {
				return "None"
			}
			return r.reason
		}},
		'V': {"SUBMIT_TIME", func(r *queueRow) string { return slurmStamp(r.job.GetSubmittedAt(), "N/A") }},
		'S': {"START_TIME", func(r *queueRow) string { return slurmStamp(r.task.GetStartedAt(), "N/A") }},
		'Q': {"PRIORITY", func(r *queueRow) string { return strconv.Itoa(int(r.job.GetPriority())) }},
	}
}

// queueStateCode is squeue's compact state.
func queueStateCode(state string) string {
	for code, full := range slurmStates() {
		if full == state {
			return code
		}
	}
	return state
}

// squeueTime writes squeue's [D-][H:]MM:SS.
func squeueTime(d time.Duration) string {
	s := int64(d / time.Second)
	days, h, m := s/86400, s/3600%24, s/60%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s%60)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s%60)
	}
	return fmt.Sprintf("%d:%02d", m, s%60)
}

// waitReason is Slurm's name for what the scheduler says a job waits for.
func waitReason(x *longfairv1.JobExplanation) string {
	switch x.GetWait() {
	case longfairv1.JobWait_JOB_WAIT_DEPENDENCY:
		return "Dependency"
	case longfairv1.JobWait_JOB_WAIT_HELD:
		return "JobHeldUser"
	case longfairv1.JobWait_JOB_WAIT_BEGIN:
		return "BeginTime"
	case longfairv1.JobWait_JOB_WAIT_THROTTLE:
		return "JobArrayTaskLimit"
	case longfairv1.JobWait_JOB_WAIT_LIMIT:
		return "AssocMaxJobsLimit"
	case longfairv1.JobWait_JOB_WAIT_NO_NODES:
		return "ReqNodeNotAvail"
	case longfairv1.JobWait_JOB_WAIT_NO_NODE_HOLDS:
		return "BadConstraints"
	case longfairv1.JobWait_JOB_WAIT_QUEUED:
		return "Resources" // placed, waiting for its node's next free slot
	}
	if x.GetReserved() || x.GetRank() == 1 && x.GetWait() == longfairv1.JobWait_JOB_WAIT_NO_ROOM {
		return "Resources"
	}
	return "Priority"
}

func squeueCommand() func(args []string, stdout, stderr io.Writer) error {
	var format, user, account, states, jobs, shape string
	var noHeader bool
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", squeueDefaultFormat, "the `fields` to show, as %-specifiers")
		fs.StringVar(&format, "o", squeueDefaultFormat, "short for --format")
		fs.StringVar(&user, "user", "", "only this `user`'s jobs")
		fs.StringVar(&user, "u", "", "short for --user")
		fs.StringVar(&account, "account", "", "only this `account`'s jobs")
		fs.StringVar(&account, "A", "", "short for --account")
		fs.StringVar(&states, "states", "", "only lines in these `states`: PENDING (PD), RUNNING (R)")
		fs.StringVar(&states, "t", "", "short for --states")
		fs.StringVar(&jobs, "jobs", "", "only these `job ids`, comma separated")
		fs.StringVar(&jobs, "j", "", "short for --jobs")
		fs.BoolVar(&noHeader, "noheader", false, "no header line")
		fs.BoolVar(&noHeader, "h", false, "short for --noheader")
		fs.StringVar(&shape, "output", "table", "output `format`: table or json")
	}
	return clientCommand("squeue", squeueHelp, false, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("squeue", args, 0, 0, ""); err != nil {
			return err
		}
		specs, err := parseSqueueFormat(format)
		if err != nil {
			return err
		}
		want, err := parseSacctStates("states", states)
		if err != nil {
			return err
		}
		for s := range want {
			if s != "PENDING" && s != "RUNNING" {
				return Usagef("--states %s: the queue holds only PENDING (PD) and RUNNING (R) lines; 'longfair sacct' shows ended ones", s)
			}
		}
		var ids []uint64
		if jobs != "" {
			if ids, err = parseJobIDs("squeue --jobs", strings.Split(jobs, ",")); err != nil {
				return err
			}
		}
		if shape != "table" && shape != "json" {
			return Usagef("--output %q: use table or json", shape)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		rows, err := queueRows(ctx, c, account, user, ids, time.Now())
		if err != nil {
			return err
		}
		kept := rows[:0]
		for _, r := range rows {
			if want == nil || want[r.state] {
				kept = append(kept, r)
			}
		}
		if shape == "json" {
			return writeSqueueJSON(out.stdout, specs, kept)
		}
		writeSqueue(out.stdout, specs, kept, !noHeader)
		return nil
	})
}

// queueRows reads the pending and running jobs, oldest first, and lays
// out their lines, asking the scheduler why pending ones wait.
func queueRows(ctx context.Context, c *client.Client, account, user string, ids []uint64, now time.Time) ([]queueRow, error) {
	active := []longfairv1.JobState{longfairv1.JobState_JOB_STATE_PENDING, longfairv1.JobState_JOB_STATE_RUNNING}
	jobs, err := oldestFirst(ctx, c, ids, &longfairv1.ListJobsRequest{Account: account, User: user, States: active})
	if err != nil {
		return nil, err
	}
	jobs = slices.DeleteFunc(jobs, client.JobEnded)
	// Only jobs that have placed a task have tasks to read.
	tasksOf, err := tasksByJob(ctx, c, jobs, false, func(i int) bool {
		j := jobs[i]
		return j.GetRunningTasks() > 0 || j.GetSucceededTasks()+j.GetFailedTasks() > 0
	})
	if err != nil {
		return nil, err
	}
	var rows []queueRow
	var asked []uint64           // jobs whose reason is asked, at most maxExplained
	reasonOf := map[uint64]int{} // a job's place in asked
	for i, j := range jobs {
		for _, r := range acctRows(j, tasksOf[i], now) {
			if r.state != "PENDING" && r.state != "RUNNING" {
				continue
			}
			if _, ok := reasonOf[j.GetId()]; r.state == "PENDING" && !ok && len(asked) < maxExplained {
				reasonOf[j.GetId()] = len(asked)
				asked = append(asked, j.GetId())
			}
			rows = append(rows, queueRow{acctRow: r, reason: "Priority"})
		}
	}
	// One call, one view of the scheduler's state for them all.
	reasons := make([]string, 0, len(asked))
	if len(asked) > 0 {
		xs, err := c.Jobs().ExplainJobs(ctx, &longfairv1.ExplainJobsRequest{JobIds: asked})
		if err != nil {
			return nil, fmt.Errorf("why jobs %d to %d wait: %w", asked[0], asked[len(asked)-1], err)
		}
		if len(xs.GetExplanations()) != len(asked) {
			return nil, fmt.Errorf("the server explained %d jobs of the %d asked: the server is faulty, upgrade or report it", len(xs.GetExplanations()), len(asked))
		}
		for _, x := range xs.GetExplanations() {
			reasons = append(reasons, waitReason(x))
		}
	}
	for i := range rows {
		if k, ok := reasonOf[rows[i].job.GetId()]; ok && rows[i].state == "PENDING" {
			rows[i].reason = reasons[k]
		}
	}
	return rows, nil
}

// cell pads or cuts v to spec's width.
func (spec squeueSpec) cell(v string) string {
	if spec.width == 0 {
		return v
	}
	if r := []rune(v); len(r) > spec.width {
		v = string(r[:spec.width])
	}
	if spec.left {
		return fmt.Sprintf("%-*s", spec.width, v)
	}
	return fmt.Sprintf("%*s", spec.width, v)
}

func writeSqueue(w io.Writer, specs []squeueSpec, rows []queueRow, header bool) {
	verbs := squeueVerbs()
	line := func(value func(squeueSpec) string) string {
		var b strings.Builder
		for _, s := range specs {
			if s.verb == 0 {
				b.WriteString(s.literal)
				continue
			}
			b.WriteString(s.cell(value(s)))
		}
		return strings.TrimRight(b.String(), " ")
	}
	if header {
		fmt.Fprintln(w, line(func(s squeueSpec) string { return verbs[s.verb].header }))
	}
	for i := range rows {
		// Escaped: names and reasons come from the cluster.
		fmt.Fprintln(w, line(func(s squeueSpec) string { return core.Escape(verbs[s.verb].value(&rows[i])) }))
	}
}

func writeSqueueJSON(w io.Writer, specs []squeueSpec, rows []queueRow) error {
	verbs := squeueVerbs()
	list := make(jsonArray, 0, len(rows))
	for i := range rows {
		var obj jsonObject
		for _, s := range specs {
			if s.verb != 0 {
				obj = append(obj, jsonField{key: verbs[s.verb].header, value: verbs[s.verb].value(&rows[i])})
			}
		}
		list = append(list, obj)
	}
	return writeJSON(w, list)
}
