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

	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/core"
)

// sacctHelp is sacct's help, listing the fields of sacctFields.
func sacctHelp() string {
	var names []string
	for _, f := range sacctFields() {
		names = append(names, f.name)
	}
	return strings.Replace(sacctHelpText, "FIELDS", strings.Join(names, " "), 1)
}

const sacctHelpText = `Usage: longfair sacct [flags]

Accounting for jobs, as Slurm's sacct shows it: a line per job, or per
array element (12_3) once it has run; the elements that have not run are
one line (12_[4-9]). With --duplicates, every attempt of a task, the
earlier ones (stopped by a requeue, or lost with their node) first;
--allocations keeps one line per job or element even with --duplicates.
Users see their own accounts' jobs, admins all. SU is what the line was
charged: a job's or element's line, every run of it (a requeued task
pays for each); an attempt's line, that run. MaxRSS, TotalCPU and CPUEff
are what the confined worker measured (empty when it measured nothing).

Jobs are listed when they overlap --starttime..--endtime (default: from
midnight today, unless --jobs names them) and match every other filter.

Fields (--format, comma separated; Field%N sets a width):
  FIELDS

Example:
  longfair sacct --starttime 2026-11-01 --format JobID,State,ExitCode,Elapsed,AllocCPUS,ReqMem,MaxRSS,SU
  longfair sacct -j 12,13 -P
`

// sacctDefaultFormat is Slurm's default, with SU for ours.
const sacctDefaultFormat = "JobID,JobName%10,Account,AllocCPUS,State,ExitCode,SU"

// acctRow is one line of sacct: a job, an element of an array, or one
// attempt of a task; task is nil for a job or elements that never ran.
type acctRow struct {
	job   *longfairv1.Job
	task  *longfairv1.Task
	id    string
	state string
	now   time.Time
	// su is what the line was charged: its attempt's charge, or, on the
	// line that stands for a task without --duplicates, every attempt's.
	su int64
}

// acctField is one --format field.
type acctField struct {
	name  string
	width int
	value func(r *acctRow) string
}

func sacctFields() []acctField {
	return []acctField{
		{"JobID", 12, func(r *acctRow) string { return r.id }},
		{"JobIDRaw", 12, func(r *acctRow) string { return strconv.FormatUint(r.job.GetId(), 10) }},
		{"JobName", 10, func(r *acctRow) string { return r.job.GetName() }},
		{"User", 9, func(r *acctRow) string { return r.job.GetUser() }},
		{"Account", 10, func(r *acctRow) string { return r.job.GetAccount() }},
		{"State", 10, func(r *acctRow) string { return r.state }},
		{"ExitCode", 8, func(r *acctRow) string { return slurmExitCode(r.task) }},
		{"Elapsed", 10, func(r *acctRow) string { return slurmClock(r.elapsed()) }},
		{"Start", 19, func(r *acctRow) string { return slurmStamp(r.task.GetStartedAt(), "Unknown") }},
		{"End", 19, func(r *acctRow) string { return slurmStamp(r.task.GetEndedAt(), "Unknown") }},
		{"Submit", 19, func(r *acctRow) string { return slurmStamp(r.job.GetSubmittedAt(), "Unknown") }},
		{"Timelimit", 10, func(r *acctRow) string { return slurmClock(r.job.GetWalltime().AsDuration()) }},
		{"NNodes", 8, func(r *acctRow) string { return strconv.Itoa(r.nodes()) }},
		{"NodeList", 15, func(r *acctRow) string { return r.nodeList() }},
		{"AllocCPUS", 10, func(r *acctRow) string { return r.cpus(true) }},
		{"ReqCPUS", 8, func(r *acctRow) string { return r.cpus(false) }},
		{"ReqMem", 10, func(r *acctRow) string {
			return client.FormatBytes(r.job.GetDemand()["mem"] * float64(r.nodes()))
		}},
		{"MaxRSS", 10, func(r *acctRow) string {
			if n := r.task.GetPeakMemBytes(); n > 0 {
				return client.FormatBytes(float64(n))
			}
			return ""
		}},
		{"TotalCPU", 10, func(r *acctRow) string {
			if s := r.task.GetCpuSeconds(); s > 0 {
				return slurmCPUTime(s)
			}
			return ""
		}},
		// CPUEff is seff's "CPU Efficiency" as a field: TotalCPU over
		// AllocCPUS × Elapsed, from the same helper job show uses.
		{"CPUEff", 7, func(r *acctRow) string {
			if r.task == nil {
				return ""
			}
			if e := cpuEfficiency(r.job, r.task); e != "-" {
				return e
			}
			return ""
		}},
		{"SU", 12, func(r *acctRow) string {
			if r.task == nil {
				if r.job.GetTasks() == 1 || strings.Contains(r.id, "[") {
					return "0"
				}
				return fmtSU(r.job.GetChargedMicroSu())
			}
			return fmtSU(r.su)
		}},
		{"Attempt", 7, func(r *acctRow) string {
			if r.task == nil {
				return ""
			}
			return strconv.Itoa(int(r.task.GetAttempt()))
		}},
		{"Reason", 20, func(r *acctRow) string {
			if r.task.GetReason() != "" {
				return r.task.GetReason()
			}
			return r.job.GetReason()
		}},
	}
}

func (r *acctRow) elapsed() time.Duration {
	t := r.task
	switch {
	case t == nil || t.GetStartedAt() == nil:
		return 0
	case t.GetEndedAt() != nil:
		return t.GetRuntime().AsDuration()
	}
	return max(r.now.Sub(t.GetStartedAt().AsTime()), 0).Truncate(time.Second)
}

func (r *acctRow) nodes() int {
	if n := len(r.task.GetNodes()); n > 0 {
		return n
	}
	return int(max(r.job.GetNodes(), 1))
}

func (r *acctRow) nodeList() string {
	switch {
	case len(r.task.GetNodes()) > 0:
		return strings.Join(r.task.GetNodes(), ",")
	case r.task.GetNode() != "":
		return r.task.GetNode()
	}
	return "None assigned"
}

// cpus is the row's cores: what it was allocated (0 before it ran) or
// what it asked for.
func (r *acctRow) cpus(allocated bool) string {
	if allocated && r.task == nil {
		return "0"
	}
	return strconv.FormatFloat(r.job.GetDemand()["cpu"]*float64(r.nodes()), 'f', -1, 64)
}

// slurmExitCode is sacct's "code:signal": a process a signal ended shows
// 0:N (the worker reports 128+N, as a shell does).
func slurmExitCode(t *longfairv1.Task) string {
	code := t.GetExitCode()
	if code > 128 && code < 128+65 {
		return fmt.Sprintf("0:%d", code-128)
	}
	return fmt.Sprintf("%d:0", code)
}

// slurmClock writes [D-]HH:MM:SS.
func slurmClock(d time.Duration) string {
	s := int64(d / time.Second)
	days, h, m := s/86400, s/3600%24, s/60%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s%60)
}

// slurmCPUTime writes TotalCPU as sacct does: [D-][HH:]MM:SS.mmm.
func slurmCPUTime(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	ms := int64(d/time.Millisecond) % 1000
	s := int64(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%s.%03d", slurmClock(d), ms)
	}
	return fmt.Sprintf("%02d:%02d.%03d", s/60, s%60, ms)
}

func slurmStamp(ts *timestamppb.Timestamp, none string) string {
	if ts == nil {
		return none
	}
	return ts.AsTime().Local().Format("2006-01-02T15:04:05")
}

// slurmStates maps sacct's state names and codes to the names rows show.
func slurmStates() map[string]string {
	return map[string]string{
		"PD": "PENDING", "R": "RUNNING", "CD": "COMPLETED", "F": "FAILED", "CA": "CANCELLED",
		"TO": "TIMEOUT", "NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "RQ": "REQUEUED",
	}
}

// taskState is the Slurm state of one attempt of job j.
func taskState(j *longfairv1.Job, t *longfairv1.Task) string {
	switch t.GetState() {
	case longfairv1.TaskState_TASK_STATE_QUEUED:
		return "PENDING"
	case longfairv1.TaskState_TASK_STATE_ASSIGNED, longfairv1.TaskState_TASK_STATE_RUNNING:
		return "RUNNING"
	case longfairv1.TaskState_TASK_STATE_SUCCEEDED:
		if t.GetRequeued() {
			return "REQUEUED"
		}
		return "COMPLETED"
	case longfairv1.TaskState_TASK_STATE_LOST:
		if t.GetRequeued() {
			return "REQUEUED"
		}
		return "NODE_FAIL"
	}
	switch {
	case t.GetRequeued():
		return "REQUEUED"
	case j.GetState() == longfairv1.JobState_JOB_STATE_CANCELLED || j.GetCancelledTasks() > 0 && j.GetState() != longfairv1.JobState_JOB_STATE_RUNNING && j.GetState() != longfairv1.JobState_JOB_STATE_PENDING:
		return "CANCELLED"
	case strings.Contains(t.GetReason(), "memory"):
		return "OUT_OF_MEMORY"
	case t.GetRuntime() != nil && t.GetRuntime().AsDuration() >= taskWalltime(j, t):
		return "TIMEOUT"
	}
	return "FAILED"
}

// jobState is the Slurm state of a job's tasks that never ran.
func unplacedState(j *longfairv1.Job) string {
	switch j.GetState() {
	case longfairv1.JobState_JOB_STATE_PENDING, longfairv1.JobState_JOB_STATE_RUNNING:
		return "PENDING"
	case longfairv1.JobState_JOB_STATE_FAILED:
		return "FAILED" // a dependency never to be met
	}
	return "CANCELLED"
}

// acctRows lays out job j with its attempts (latest of each task, or
// every one).
func acctRows(j *longfairv1.Job, tasks []*longfairv1.Task, now time.Time) []acctRow {
	id := strconv.FormatUint(j.GetId(), 10)
	array := j.GetTasks() > 1
	var rows []acctRow
	ran := map[int64]bool{}
	for _, t := range tasks {
		rid := id
		if array {
			rid = fmt.Sprintf("%s_%d", id, t.GetIndex())
		}
		ran[t.GetIndex()] = true
		rows = append(rows, acctRow{job: j, task: t, id: rid, state: taskState(j, t), now: now, su: t.GetChargedMicroSu()})
	}
	var never []int64
	for i := range j.GetTasks() {
		if !ran[i] {
			never = append(never, i)
		}
	}
	switch {
	case len(never) == 0:
	case !array:
		rows = append(rows, acctRow{job: j, id: id, state: unplacedState(j), now: now})
	default:
		rows = append(rows, acctRow{job: j, id: fmt.Sprintf("%s_[%s]", id, indexRanges(never)), state: unplacedState(j), now: now})
	}
	return rows
}

// indexRanges writes sorted indexes as Slurm's array ranges: "0-3,7,9-10".
func indexRanges(xs []int64) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(xs[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// sacctColumn is a chosen field with its width.
type sacctColumn struct {
	acctField
	width int
}

// parseSacctFormat reads --format: Slurm's field names, any case, each
// with an optional %N width.
func parseSacctFormat(s string) ([]sacctColumn, error) {
	fields := sacctFields()
	var cols []sacctColumn
	for _, part := range strings.Split(s, ",") {
		name, width, hasWidth := strings.Cut(strings.TrimSpace(part), "%")
		i := slices.IndexFunc(fields, func(f acctField) bool { return strings.EqualFold(f.name, name) })
		if i < 0 {
			names := make([]string, len(fields))
			for k, f := range fields {
				names[k] = f.name
			}
			return nil, Usagef("--format: %q is not a field: use %s", name, strings.Join(names, ", "))
		}
		col := sacctColumn{acctField: fields[i], width: fields[i].width}
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil || w < 1 || w > 1000 {
				return nil, Usagef("--format: %q has width %q: give a number of columns from 1 to 1000, as in JobName%%30", part, width)
			}
			col.width = w
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// parseSacctStates reads a state list (sacct --state, squeue --states,
// named by option): names or codes, comma separated.
func parseSacctStates(option, s string) (map[string]bool, error) {
	if s == "" {
		return nil, nil
	}
	codes := slurmStates()
	known := map[string]bool{}
	for _, full := range codes {
		known[full] = true
	}
	out := map[string]bool{}
	for _, p := range strings.Split(strings.ToUpper(s), ",") {
		p = strings.TrimSpace(p)
		if full, ok := codes[p]; ok {
			p = full
		}
		if !known[p] {
			return nil, Usagef("--%s: %q is not a state: use PENDING (PD), RUNNING (R), COMPLETED (CD), FAILED (F), CANCELLED (CA), TIMEOUT (TO), NODE_FAIL (NF), OUT_OF_MEMORY (OOM) or REQUEUED (RQ)", option, p)
		}
		out[p] = true
	}
	return out, nil
}

// parseSacctTime reads --starttime and --endtime the ways sacct does:
// now, now-N[unit], now+N[unit], today, midnight, noon, HH:MM[:SS]
// (today), YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY].
func parseSacctTime(flagName, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	bad := Usagef("--%s %q is not a time: give 2026-11-01, 2026-11-01T08:00, 08:00, 11/01, now-2days, today or midnight", flagName, s)
	low := strings.ToLower(s)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	switch low {
	case "now":
		return now, nil
	case "today", "midnight":
		return day, nil
	case "noon":
		return day.Add(12 * time.Hour), nil
	}
	if rest, ok := strings.CutPrefix(low, "now-"); ok {
		d, err := slurmOffset(rest)
		if err != nil {
			return time.Time{}, bad
		}
		return now.Add(-d), nil
	}
	if strings.HasPrefix(low, "now+") {
		t, err := parseBegin(s, now)
		if err != nil {
			return time.Time{}, bad
		}
		return t, nil
	}
	if t, ok := slurmDate(s, now.Location()); ok {
		return t, nil
	}
	// sacct looks back: a clock time is today's.
	if t, ok := slurmClockTime(s, now.Location()); ok {
		return time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), t.Second(), 0, now.Location()), nil
	}
	// sacct's own short dates: MM/DD/YY and MMDDYY, or this year's MM/DD
	// and MMDD.
	for _, layout := range []string{"01/02/06", "010206"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"01/02", "0102"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return time.Date(now.Year(), t.Month(), t.Day(), 0, 0, 0, 0, now.Location()), nil
		}
	}
	return time.Time{}, bad
}

// sacctQuery is what sacct's options select.
type sacctQuery struct {
	start, end  time.Time
	user, acct  string
	jobs        []uint64
	states      map[string]bool
	duplicates  bool
	columns     []sacctColumn
	parsable    string // "", "p" (trailing |) or "P"
	noHeader    bool
	outputShape string
}

// jobInRange reports whether job j can have a line in [start, end]: not
// when it was submitted after the end or ended before the start (a job
// ends after every attempt of it). ListJobs selects the same jobs; servers
// older than its since and until list every job, and this spares a
// ListTasks call for each of a user's older jobs then.
func (q *sacctQuery) jobInRange(j *longfairv1.Job) bool {
	if t := j.GetSubmittedAt(); t != nil && t.AsTime().After(q.end) {
		return false
	}
	t := j.GetEndedAt()
	return t == nil || !t.AsTime().Before(q.start)
}

// overlaps reports whether row r was eligible or ran during [start, end].
func (q *sacctQuery) overlaps(r *acctRow) bool {
	if t := r.job.GetSubmittedAt(); t != nil && t.AsTime().After(q.end) {
		return false
	}
	end := r.task.GetEndedAt()
	if r.task == nil {
		end = r.job.GetEndedAt()
	}
	return end == nil || !end.AsTime().Before(q.start)
}

func sacctCommand() func(args []string, stdout, stderr io.Writer) error {
	var q sacctQuery
	var format, start, end, states, jobs string
	var allocations, p2, p1 bool
	// -o is --format, as in sacct, so --output (table, json, csv) has no
	// short form here.
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&q.outputShape, "output", "table", "output `format`: table, json or csv")
		fs.StringVar(&format, "format", sacctDefaultFormat, "the `fields` to show, comma separated (Field%N sets a width)")
		fs.StringVar(&format, "o", sacctDefaultFormat, "short for --format")
		fs.StringVar(&start, "starttime", "", "jobs that were eligible or ran from this `time` (default: midnight today)")
		fs.StringVar(&start, "S", "", "short for --starttime")
		fs.StringVar(&end, "endtime", "", "… until this `time` (default: now)")
		fs.StringVar(&end, "E", "", "short for --endtime")
		fs.StringVar(&q.user, "user", "", "only this `user`'s jobs")
		fs.StringVar(&q.user, "u", "", "short for --user")
		fs.StringVar(&q.acct, "account", "", "only this `account`'s jobs")
		fs.StringVar(&q.acct, "A", "", "short for --account")
		fs.StringVar(&states, "state", "", "only lines in these `states` (names or codes: CD,F,CA,TO,NF,OOM,RQ,PD,R)")
		fs.StringVar(&states, "s", "", "short for --state")
		fs.StringVar(&jobs, "jobs", "", "only these `job ids`, comma separated")
		fs.StringVar(&jobs, "j", "", "short for --jobs")
		fs.BoolVar(&allocations, "allocations", false, "one line per job or array element, never its earlier attempts (overrides --duplicates)")
		fs.BoolVar(&allocations, "X", false, "short for --allocations")
		fs.BoolVar(&q.duplicates, "duplicates", false, "every attempt of a task, not only the latest")
		fs.BoolVar(&q.duplicates, "D", false, "short for --duplicates")
		fs.BoolVar(&p2, "parsable2", false, "fields separated by |, no trailing |")
		fs.BoolVar(&p2, "P", false, "short for --parsable2")
		fs.BoolVar(&p1, "parsable", false, "fields separated by |, with a trailing |")
		fs.BoolVar(&p1, "p", false, "short for --parsable")
		fs.BoolVar(&q.noHeader, "noheader", false, "no header line")
		fs.BoolVar(&q.noHeader, "n", false, "short for --noheader")
	}
	return clientCommand("sacct", sacctHelp(), false, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("sacct", args, 0, 0, ""); err != nil {
			return err
		}
		now := time.Now()
		var err error
		if q.columns, err = parseSacctFormat(format); err != nil {
			return err
		}
		if q.states, err = parseSacctStates("state", states); err != nil {
			return err
		}
		if jobs != "" {
			if q.jobs, err = parseJobIDs("sacct --jobs", strings.Split(jobs, ",")); err != nil {
				return err
			}
		}
		q.start, q.end = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location()), now
		if len(q.jobs) > 0 {
			q.start = time.Time{}
		}
		if start != "" {
			if q.start, err = parseSacctTime("starttime", start, now); err != nil {
				return err
			}
		}
		if end != "" {
			if q.end, err = parseSacctTime("endtime", end, now); err != nil {
				return err
			}
		}
		if q.end.Before(q.start) {
			return Usagef("--endtime %s is before --starttime %s: give an end after the start", q.end.Format(time.DateTime), q.start.Format(time.DateTime))
		}
		// Attempts are sacct's steps here: -X, jobs only, drops them.
		q.duplicates = q.duplicates && !allocations
		switch {
		case p2:
			q.parsable = "P"
		case p1:
			q.parsable = "p"
		}
		if q.outputShape != "table" && q.outputShape != "json" && q.outputShape != "csv" {
			return Usagef("--output %q: use table, json or csv", q.outputShape)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		rows, err := q.collect(ctx, c, now)
		if err != nil {
			return err
		}
		return q.write(out.stdout, rows)
	})
}

// collect reads the jobs q selects and lays out their lines, oldest job
// first, as sacct lists them.
func (q *sacctQuery) collect(ctx context.Context, c *client.Client, now time.Time) ([]acctRow, error) {
	jobs, err := oldestFirst(ctx, c, q.jobs, &longfairv1.ListJobsRequest{Account: q.acct, User: q.user, Since: storable(q.start), Until: storable(q.end)})
	if err != nil {
		return nil, err
	}
	jobs = slices.DeleteFunc(jobs, func(j *longfairv1.Job) bool {
		return q.acct != "" && j.GetAccount() != q.acct || q.user != "" && j.GetUser() != q.user || !q.jobInRange(j)
	})
	tasksOf, err := tasksByJob(ctx, c, jobs, q.duplicates, nil)
	if err != nil {
		return nil, err
	}
	var attemptsOf [][]*longfairv1.Task
	if !q.duplicates {
		// A line per task stands for all its attempts: read every
		// attempt of the jobs that ran a task more than once (requeued,
		// or lost with its node).
		rerun := func(i int) bool {
			return slices.ContainsFunc(tasksOf[i], func(t *longfairv1.Task) bool { return t.GetAttempt() > 1 })
		}
		if attemptsOf, err = tasksByJob(ctx, c, jobs, true, rerun); err != nil {
			return nil, err
		}
	}
	var out []acctRow
	for i, j := range jobs {
		rows := acctRows(j, tasksOf[i], now)
		if attemptsOf != nil && attemptsOf[i] != nil {
			chargeEveryAttempt(attemptsOf[i], rows)
		}
		for _, r := range rows {
			if q.overlaps(&r) && (q.states == nil || q.states[r.state]) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// storable is t for a request's window, or none when t is outside the
// times the cluster stores (1970–2262), which the window then need not
// bound: sacct --starttime 1960-01-01 lists from the first job.
func storable(t time.Time) *timestamppb.Timestamp {
	if !longfairv1.StorableTime(t) {
		return nil
	}
	return timestamppb.New(t)
}

// chargeEveryAttempt sets the SU of the lines that stand for tasks run
// more than once to the sum of all their attempts' charges: the ledger
// charged each run, and a line per job must add up to what the job cost.
func chargeEveryAttempt(attempts []*longfairv1.Task, rows []acctRow) {
	total := map[int64]int64{}
	for _, t := range attempts {
		total[t.GetIndex()] += t.GetChargedMicroSu()
	}
	for i := range rows {
		if rows[i].task != nil {
			rows[i].su = total[rows[i].task.GetIndex()]
		}
	}
}

// oldestFirst reads the jobs named by ids, in that order, or else every
// job list matches, oldest first, as sacct and squeue list them.
func oldestFirst(ctx context.Context, c *client.Client, ids []uint64, list *longfairv1.ListJobsRequest) ([]*longfairv1.Job, error) {
	var jobs []*longfairv1.Job
	if len(ids) > 0 {
		for _, id := range ids {
			j, err := c.Job(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("job %d: %w", id, err)
			}
			jobs = append(jobs, j)
		}
		return jobs, nil
	}
	for j, err := range c.AllJobs(ctx, list) {
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	slices.Reverse(jobs)
	return jobs, nil
}

// write prints rows as sacct does: columns of fixed width (longer values
// cut with a +), | separated with --parsable(2), or JSON or CSV.
func (q *sacctQuery) write(w io.Writer, rows []acctRow) error {
	values := func(r *acctRow) []string {
		v := make([]string, len(q.columns))
		for i, col := range q.columns {
			// Escaped: names and reasons come from the cluster.
			v[i] = core.Escape(col.value(r))
		}
		return v
	}
	switch q.outputShape {
	case "json":
		list := make(jsonArray, 0, len(rows))
		for i := range rows {
			var obj jsonObject
			for k, v := range values(&rows[i]) {
				obj = append(obj, jsonField{key: q.columns[k].name, value: v})
			}
			list = append(list, obj)
		}
		return writeJSON(w, list)
	case "csv":
		t := table{}
		for _, col := range q.columns {
			t.header = append(t.header, col.name)
		}
		for i := range rows {
			t.add(values(&rows[i])...)
		}
		return writeTable(w, "csv", t)
	}
	line := func(cells []string) string {
		if q.parsable != "" {
			s := strings.Join(cells, "|")
			if q.parsable == "p" {
				s += "|"
			}
			return s
		}
		for i, c := range cells {
			width := q.columns[i].width
			if r := []rune(c); len(r) > width {
				c = string(r[:width-1]) + "+"
			}
			cells[i] = fmt.Sprintf("%*s", width, c)
		}
		return strings.Join(cells, " ")
	}
	if !q.noHeader {
		head := make([]string, len(q.columns))
		for i, col := range q.columns {
			head[i] = col.name
		}
		fmt.Fprintln(w, line(head))
		if q.parsable == "" {
			dashes := make([]string, len(q.columns))
			for i, col := range q.columns {
				dashes[i] = strings.Repeat("-", col.width)
			}
			fmt.Fprintln(w, strings.Join(dashes, " "))
		}
	}
	for i := range rows {
		fmt.Fprintln(w, line(values(&rows[i])))
	}
	return nil
}

// taskWalltime is the walltime attempt t ran under: the one it kept when
// its job's was lowered after it was placed, else its job's.
func taskWalltime(j *longfairv1.Job, t *longfairv1.Task) time.Duration {
	if w := t.GetWalltime().AsDuration(); w > 0 {
		return w
	}
	return j.GetWalltime().AsDuration()
}
