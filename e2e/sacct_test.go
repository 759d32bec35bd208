package e2e

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"google.golang.org/protobuf/types/known/timestamppb"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// `longfair sacct --format JobID,State,ExitCode,Elapsed,AllocCPUS,ReqMem,
// MaxRSS,SU` on real jobs, read as a script reads it (--parsable2), agrees
// with the ledger's own export: each line's SU is the sum of the charges
// the journal holds for that job or element, and its state, exit code,
// cores and elapsed time are those of the attempt the cluster recorded.
func TestSacctAgreesWithTheLedgerExport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	start := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")
	base := []string{"--account", acct, "--user", user, "--walltime", "1m"}
	ok := c.cliSubmit(ctx, append(base, "--cpu", "2", "--mem", "1G", "--", "sleep 1")...)
	bad := c.cliSubmit(ctx, append(base, "--cpu", "1", "--", "exit 3")...)
	array := c.cliSubmit(ctx, append(base, "--cpu", "1", "--array", "3", "--", "true")...)
	// requeued runs twice: its first attempt is stopped by a requeue (it
	// exits 128+SIGTERM), its second succeeds; both are charged.
	dir := t.TempDir()
	mark, ready := filepath.Join(dir, "mark"), filepath.Join(dir, "ready")
	requeued := c.cliSubmit(ctx, append(base, "--cpu", "1", "--", fmt.Sprintf(`if [ -e %[1]s ]; then exit 0; fi
trap 'exit 143' TERM
touch %[1]s %[2]s
while :; do sleep 0.1; done`, mark, ready))...)
	waitFile(ctx, t, ready)
	c.cli(ctx, "requeue", fmt.Sprint(requeued))
	c.waitEnded(ctx, ok, bad, array, requeued)

	out := c.cli(ctx, "sacct", "-S", start, "-P", "--format", "JobID,State,ExitCode,Elapsed,AllocCPUS,ReqMem,MaxRSS,SU")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "JobID|State|ExitCode|Elapsed|AllocCPUS|ReqMem|MaxRSS|SU" {
		t.Fatalf("sacct -P header: %q", lines[0])
	}
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != 8 {
			t.Fatalf("sacct -P line %q has %d fields, want 8", l, len(f))
		}
		rows[f[0]] = f
	}

	exportFile := filepath.Join(t.TempDir(), "journal.csv")
	c.cli(ctx, "ledger", "export", "--format", "csv", "--out", exportFile)
	charges := exportedCharges(t, exportFile)

	want := map[string]struct {
		job            uint64
		task           int64
		state, exit    string
		cpus, mem, min string
	}{
		fmt.Sprint(ok):             {ok, 0, "COMPLETED", "0:0", "2", "1G", "00:00:01"},
		fmt.Sprint(bad):            {bad, 0, "FAILED", "3:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_0", array): {array, 0, "COMPLETED", "0:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_1", array): {array, 1, "COMPLETED", "0:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_2", array): {array, 2, "COMPLETED", "0:0", "1", "0", "00:00:00"},
		fmt.Sprint(requeued):       {requeued, 0, "COMPLETED", "0:0", "1", "0", "00:00:00"},
	}
	if len(rows) != len(want) {
		t.Errorf("sacct listed %d lines, want %d:\n%s", len(rows), len(want), out)
	}
	// The PI's report by day adds up to the same charges.
	report := c.cli(ctx, "usage", "report", "--from", start, "--per", "day", "--account", acct, "--output", "csv")
	recs, err := csv.NewReader(strings.NewReader(report)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "PERIOD" {
		t.Fatalf("usage report --per day: %v\n%s", err, report)
	}
	var reported, exported int64
	for _, r := range recs[1:] {
		su, err := client.ParseSU(r[slices.Index(recs[0], "CHARGED_SU")])
		if err != nil {
			t.Fatal(err)
		}
		reported += su
	}
	for _, su := range charges {
		exported += su
	}
	if reported != exported {
		t.Errorf("usage report --per day charges %s SU, the ledger export %s", client.FormatSU(reported), client.FormatSU(exported))
	}
	for id, w := range want {
		r, found := rows[id]
		if !found {
			t.Errorf("sacct has no line %s:\n%s", id, out)
			continue
		}
		if r[1] != w.state || r[2] != w.exit || r[4] != w.cpus || r[5] != w.mem {
			t.Errorf("line %s: %v; want state %s, exit %s, %s cores, mem %s", id, r, w.state, w.exit, w.cpus, w.mem)
		}
		if r[3] < w.min {
			t.Errorf("line %s elapsed %s, want at least %s", id, r[3], w.min)
		}
		if r[6] != "" {
			t.Errorf("line %s MaxRSS %q on an unconfined worker, which measures nothing", id, r[6])
		}
		su, err := client.ParseSU(r[7])
		if err != nil {
			t.Fatalf("line %s SU %q: %v", id, r[7], err)
		}
		if got := charges[fmt.Sprintf("job-%d.task-%d.", w.job, w.task)]; su != got || su <= 0 {
			t.Errorf("line %s: sacct says %s SU, the ledger export charges %s", id, client.FormatSU(su), client.FormatSU(got))
		}
	}

	// --output json carries the same cells, keyed by field name.
	var objs []map[string]string
	js := c.cli(ctx, "sacct", "-j", fmt.Sprintf("%d,%d", ok, bad), "--output", "json", "--format", "JobID,State,SU")
	if err := json.Unmarshal([]byte(js), &objs); err != nil || len(objs) != 2 {
		t.Fatalf("sacct --output json: %v, %d objects:\n%s", err, len(objs), js)
	}
	for _, o := range objs {
		if r := rows[o["JobID"]]; r == nil || o["State"] != r[1] || o["SU"] != r[7] {
			t.Errorf("sacct --output json %v; -P printed %v", o, r)
		}
	}

	// Per attempt (-D): the requeued task's two attempts, each with the
	// charge the export holds for that attempt; -X keeps the job line alone.
	out = c.cli(ctx, "sacct", "-D", "-P", "-n", "-j", fmt.Sprint(requeued), "--format", "JobID,Attempt,State,ExitCode,SU")
	attempts := strings.Split(strings.TrimSpace(out), "\n")
	wantAttempts := [][]string{{"1", "REQUEUED", "0:15"}, {"2", "COMPLETED", "0:0"}}
	if len(attempts) != len(wantAttempts) {
		t.Fatalf("sacct -D -j %d printed %d lines, want one per attempt (%d):\n%s", requeued, len(attempts), len(wantAttempts), out)
	}
	perAttempt := exportedAttemptCharges(t, exportFile)
	var sum int64
	for i, l := range attempts {
		f := strings.Split(l, "|")
		if len(f) != 5 || f[0] != fmt.Sprint(requeued) || !slices.Equal(f[1:4], wantAttempts[i]) {
			t.Errorf("sacct -D line %q; want JobID %d, attempt, state and exit code %v", l, requeued, wantAttempts[i])
			continue
		}
		su, err := client.ParseSU(f[4])
		if err != nil {
			t.Fatalf("sacct -D line %q: SU: %v", l, err)
		}
		sum += su
		key := fmt.Sprintf("job-%d.task-0.attempt-%s", requeued, f[1])
		if got := perAttempt[key]; su != got || su <= 0 {
			t.Errorf("attempt %s: sacct says %s SU, the ledger export charges %s", f[1], client.FormatSU(su), client.FormatSU(got))
		}
	}
	if total := charges[fmt.Sprintf("job-%d.task-0.", requeued)]; sum != total {
		t.Errorf("the attempts' SU add up to %s, the job's charges to %s", client.FormatSU(sum), client.FormatSU(total))
	}
	out = c.cli(ctx, "sacct", "-D", "-X", "-P", "-n", "-j", fmt.Sprint(requeued), "--format", "JobID,Attempt")
	if got := strings.TrimSpace(out); got != fmt.Sprintf("%d|2", requeued) {
		t.Errorf("sacct -D -X printed %q, want the latest attempt alone", got)
	}

	// What sacct reads, many jobs' tasks in one listing, holds what each
	// job's own listing does, in the order the jobs are named, when the
	// server sends it one task a page.
	cl := newClient(t, grpcAddrs(c.live()...), client.WithPageSize(1))
	jobs := []uint64{requeued, array, ok, bad}
	for _, all := range []bool{false, true} {
		name := func(tk *longfairv1.Task) string {
			return fmt.Sprintf("%d_%d attempt %d %s", tk.GetJobId(), tk.GetIndex(), tk.GetAttempt(), tk.GetState())
		}
		var want, got []string
		for _, id := range jobs {
			list := cl.AllTasks
			if all {
				list = cl.AllAttempts
			}
			for tk, err := range list(ctx, id) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, name(tk))
			}
		}
		for tk, err := range cl.TasksOf(ctx, jobs, all) {
			if err != nil {
				t.Fatalf("the tasks of jobs %v (all attempts: %v): %v", jobs, all, err)
			}
			got = append(got, name(tk))
		}
		if len(want) < 6 || !slices.Equal(got, want) {
			t.Errorf("the tasks of jobs %v (all attempts: %v), a task a page:\n%s\nwant, as each job lists them:\n%s", jobs, all, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	// The servers select sacct's jobs by time: a window names exactly
	// the jobs queued or running in it, taken from the jobs' own times.
	var firstSubmit, firstEnd, lastEnd time.Time
	submitted := map[time.Time]int{}
	for i, id := range jobs {
		j, err := cl.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sub, end := j.GetSubmittedAt().AsTime(), j.GetEndedAt().AsTime()
		submitted[sub]++
		if i == 0 || sub.Before(firstSubmit) {
			firstSubmit = sub
		}
		if i == 0 || end.Before(firstEnd) {
			firstEnd = end
		}
		if end.After(lastEnd) {
			lastEnd = end
		}
	}
	firstSubmitted := submitted[firstSubmit]
	for _, w := range []struct {
		name         string
		since, until time.Time
		want         int
	}{
		{"from the first end", firstEnd, time.Time{}, len(jobs)},
		{"from just after the last end", lastEnd.Add(time.Nanosecond), time.Time{}, 0},
		{"until just before the first submission", firstSubmit.Add(-time.Hour), firstSubmit.Add(-time.Nanosecond), 0},
		{"at the first submission", firstSubmit, firstSubmit, firstSubmitted},
	} {
		req := &longfairv1.ListJobsRequest{Account: acct, Since: timestamppb.New(w.since)}
		if !w.until.IsZero() {
			req.Until = timestamppb.New(w.until)
		}
		var got []uint64
		for j, err := range cl.AllJobs(ctx, req) {
			if err != nil {
				t.Fatalf("jobs %s: %v", w.name, err)
			}
			if slices.Contains(jobs, j.GetId()) {
				got = append(got, j.GetId())
			}
		}
		if len(got) != w.want {
			t.Errorf("jobs %s (%s .. %s): %v, want %d of %v", w.name, w.since.Format(time.RFC3339Nano), w.until.Format(time.RFC3339Nano), got, w.want, jobs)
		}
	}
	// `longfair jobs --since` asks for the same window, to the second.
	for since, want := range map[string]int{
		firstEnd.Local().Format("2006-01-02T15:04:05"):                 len(jobs),
		lastEnd.Add(time.Second).Local().Format("2006-01-02T15:04:05"): 0,
	} {
		out := c.cli(ctx, "jobs", "--account", acct, "--since", since, "--output", "csv")
		if n := strings.Count(strings.TrimSpace(out), "\n"); n != want {
			t.Errorf("jobs --since %s lists %d jobs, want %d:\n%s", since, n, want, out)
		}
	}
}

// Bad input to sacct and squeue is a usage error (exit 2) that names what
// was wrong and what to give instead.
func TestSacctRefusesBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, _ := startOneWorker(ctx, t, "chem")
	for _, tc := range []struct {
		args        []string
		bad, remedy string
	}{
		{[]string{"--format", "JobID,Nope"}, `"Nope"`, "use JobID"},
		{[]string{"--format", "JobName%x"}, `"x"`, "JobName%30"},
		{[]string{"-S", "yesterday-ish"}, `"yesterday-ish"`, "give 2026-11-01"},
		{[]string{"--endtime", "2026-13-01"}, `"2026-13-01"`, "give"},
		{[]string{"-s", "CD,BOGUS"}, `"BOGUS"`, "use PENDING"},
		{[]string{"-S", "2026-11-02", "-E", "2026-11-01"}, "before --starttime", "give an end after the start"},
		{[]string{"squeue", "-o", "%i %z"}, "%z is not a field", "use %i"},
		{[]string{"squeue", "-o", "%.18"}, "ends inside a %-specifier", "end it with a letter"},
		{[]string{"squeue", "-t", "BOGUS"}, `--states: "BOGUS"`, "PENDING"},
	} {
		args := tc.args
		if args[0] != "squeue" {
			args = append([]string{"sacct"}, args...)
		}
		code, out := c.cliFails(ctx, args...)
		if code != 2 || !strings.Contains(out, tc.bad) || !strings.Contains(out, tc.remedy) {
			t.Errorf("longfair %s: exit %d, want 2 with %s and %q:\n%s", strings.Join(args, " "), code, tc.bad, tc.remedy, out)
		}
	}
}

// exportedAttemptCharges sums a CSV ledger export's charges by attempt
// ("job-J.task-T.attempt-A").
func exportedAttemptCharges(t *testing.T, path string) map[string]int64 {
	return exportedChargesBy(t, path, func(id string) string { return id })
}

// exportedCharges sums a CSV ledger export's charges by task ("job-J.task-T.").
func exportedCharges(t *testing.T, path string) map[string]int64 {
	return exportedChargesBy(t, path, func(id string) string { return id[:strings.Index(id, ".attempt-")+1] })
}

// exportedChargesBy sums a CSV ledger export's charges by key(charge id);
// every charge id must name its job, task and attempt.
func exportedChargesBy(t *testing.T, path string, key func(id string) string) map[string]int64 {
	t.Helper()
	recs := readExport(t, path)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	out := map[string]int64{}
	for _, r := range recs[1:] {
		if r[col["KIND"]] != "charge" {
			continue
		}
		id := r[col["ID"]]
		var job, task, attempt uint64
		if _, err := fmt.Sscanf(id, "job-%d.task-%d.attempt-%d", &job, &task, &attempt); err != nil {
			t.Fatalf("export charge id %q: %v", id, err)
		}
		su, err := client.ParseSU(r[col["AMOUNT_SU"]])
		if err != nil {
			t.Fatalf("export charge %s amount %q: %v", id, r[col["AMOUNT_SU"]], err)
		}
		out[key(id)] += su
	}
	return out
}

// readExport reads a CSV ledger export, header first.
func readExport(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("ledger export: %d records, %v", len(recs), err)
	}
	return recs
}

// `longfair squeue` on a real worker: a running job shows its node, a
// held job, one waiting for a dependency and an array's elements still
// to run show why they wait, as the scheduler says; --states filters.
func TestSqueueShowsWhyJobsWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	ready := filepath.Join(t.TempDir(), "ready")
	base := []string{"--account", acct, "--user", user, "--walltime", "1m"}
	// w1 has 4 cores: the runner takes them all, so the array waits.
	runner := c.cliSubmit(ctx, append(base, "--cpu", "4", "--", "touch "+ready+"; sleep 300")...)
	waitFile(ctx, t, ready)
	held := c.cliSubmit(ctx, append(base, "--cpu", "1", "--hold", "--", "true")...)
	dep := c.cliSubmit(ctx, append(base, "--cpu", "1", "--dependency", fmt.Sprintf("afterok:%d", runner), "--", "true")...)
	array := c.cliSubmit(ctx, append(base, "--cpu", "1", "--array", "3", "--", "true")...)

	out := c.cli(ctx, "squeue", "-o", "%i|%t|%D|%R")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "JOBID|ST|NODES|NODELIST(REASON)" {
		t.Fatalf("squeue header %q", lines[0])
	}
	want := []string{
		fmt.Sprintf("%d|R|1|w1", runner),
		fmt.Sprintf("%d|PD|1|(JobHeldUser)", held),
		fmt.Sprintf("%d|PD|1|(Dependency)", dep),
		fmt.Sprintf("%d_[0-2]|PD|1|(Resources)", array),
	}
	if strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("squeue printed:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
	if out := c.cli(ctx, "squeue", "-h", "-t", "R", "-o", "%i"); strings.TrimSpace(out) != fmt.Sprint(runner) {
		t.Errorf("squeue -t R printed %q, want the running job alone", out)
	}
	if code, out := c.cliFails(ctx, "squeue", "-t", "CD"); code != 2 || !strings.Contains(out, "sacct") {
		t.Errorf("squeue -t CD: exit %d:\n%s", code, out)
	}
	// dep first: once runner is cancelled, dep's afterok can never be met
	// and the cluster fails it, leaving nothing to cancel.
	c.cli(ctx, "cancel", fmt.Sprint(dep), fmt.Sprint(held), fmt.Sprint(array), fmt.Sprint(runner))
}
