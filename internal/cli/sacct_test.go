package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestSacctFormatAndStates(t *testing.T) {
	cols, err := parseSacctFormat("jobid,JobName%30,su")
	if err != nil || len(cols) != 3 || cols[0].name != "JobID" || cols[1].width != 30 || cols[2].name != "SU" {
		t.Fatalf("parseSacctFormat: %+v, %v", cols, err)
	}
	for _, bad := range []string{"JobID,Nope", "JobName%0", "JobName%x", ""} {
		if _, err := parseSacctFormat(bad); err == nil {
			t.Errorf("--format %q was accepted", bad)
		}
	}
	st, err := parseSacctStates("state", "cd,F,timeout")
	if err != nil || !st["COMPLETED"] || !st["FAILED"] || !st["TIMEOUT"] || len(st) != 3 {
		t.Fatalf("parseSacctStates: %v, %v", st, err)
	}
	if _, err := parseSacctStates("state", "CD,BOGUS"); err == nil || !strings.Contains(err.Error(), "--state: \"BOGUS\"") {
		t.Errorf("an unknown state: %v", err)
	}
}

func TestSacctJobInRange(t *testing.T) {
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local)
	q := sacctQuery{start: start, end: start.Add(12 * time.Hour)}
	before, during, after := start.Add(-time.Hour), start.Add(time.Hour), q.end.Add(time.Hour)
	for _, tc := range []struct {
		name           string
		submitted, end time.Time
		want           bool
	}{
		{"ended before the range", before.Add(-time.Hour), before, false},
		{"ran into the range", before, during, true},
		{"still running", before, time.Time{}, true},
		{"submitted after the range", after, time.Time{}, false},
		{"ended at the start", before, start, true},
	} {
		j := &longfairv1.Job{SubmittedAt: timestamppb.New(tc.submitted)}
		if !tc.end.IsZero() {
			j.EndedAt = timestamppb.New(tc.end)
		}
		if got := q.jobInRange(j); got != tc.want {
			t.Errorf("a job %s: jobInRange %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSacctTimes(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 30, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"now":                 now,
		"now-2days":           now.Add(-48 * time.Hour),
		"now-90m":             now.Add(-90 * time.Minute),
		"today":               time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local),
		"08:15":               time.Date(2026, 11, 25, 8, 15, 0, 0, time.Local),
		"2026-11-01":          time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local),
		"2026-11-01T08:00:05": time.Date(2026, 11, 1, 8, 0, 5, 0, time.Local),
		"11/02":               time.Date(2026, 11, 2, 0, 0, 0, 0, time.Local),
		"1103":                time.Date(2026, 11, 3, 0, 0, 0, 0, time.Local),
	} {
		got, err := parseSacctTime("starttime", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday-ish", "25:00", "2026-13-01", "now-x"} {
		if _, err := parseSacctTime("starttime", bad, now); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestSacctCells(t *testing.T) {
	if got := indexRanges([]int64{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("indexRanges: %q", got)
	}
	for code, want := range map[int32]string{0: "0:0", 3: "3:0", 143: "0:15", 137: "0:9", 255: "255:0"} {
		if got := slurmExitCode(&longfairv1.Task{ExitCode: code}); got != want {
			t.Errorf("exit %d: %q, want %q", code, got, want)
		}
	}
	if got := slurmClock(26*time.Hour + 3*time.Minute + 4*time.Second); got != "1-02:03:04" {
		t.Errorf("slurmClock: %q", got)
	}
	if got := slurmCPUTime(65.5); got != "01:05.500" {
		t.Errorf("slurmCPUTime: %q", got)
	}
	j := &longfairv1.Job{Id: 7, Tasks: 4, Walltime: durationpb.New(time.Minute), State: longfairv1.JobState_JOB_STATE_RUNNING}
	rows := acctRows(j, []*longfairv1.Task{{Index: 1, State: longfairv1.TaskState_TASK_STATE_RUNNING}}, time.Now())
	if len(rows) != 2 || rows[0].id != "7_1" || rows[0].state != "RUNNING" || rows[1].id != "7_[0,2-3]" || rows[1].state != "PENDING" {
		t.Fatalf("rows of a running array: %+v", rows)
	}
	// CPUEff: measured CPU seconds over cores × runtime; empty unmeasured.
	cores, run, used := 2.0, 10*time.Second, 15.0
	eff := fieldValue(t, "CPUEff")
	job := &longfairv1.Job{Demand: map[string]float64{"cpu": cores}}
	measuredRow := &acctRow{job: job, task: &longfairv1.Task{CpuSeconds: used, Runtime: durationpb.New(run)}}
	if got, want := eff(measuredRow), fmt.Sprintf("%.1f%%", 100*used/(cores*run.Seconds())); got != want {
		t.Errorf("CPUEff of a measured attempt: %q, want %q", got, want)
	}
	if got := eff(&acctRow{job: job, task: &longfairv1.Task{Runtime: durationpb.New(run)}}); got != "" {
		t.Errorf("CPUEff of an attempt nothing measured: %q, want empty", got)
	}
	timedOut := &longfairv1.Task{State: longfairv1.TaskState_TASK_STATE_FAILED, ExitCode: 143, Runtime: durationpb.New(time.Minute)}
	if got := taskState(&longfairv1.Job{Walltime: durationpb.New(time.Minute), State: longfairv1.JobState_JOB_STATE_FAILED}, timedOut); got != "TIMEOUT" {
		t.Errorf("a task stopped at its walltime: %s", got)
	}
}

func TestSqueueFormat(t *testing.T) {
	specs, err := parseSqueueFormat("%.18i %-9P|%j %%")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, s := range specs {
		if s.verb == 0 {
			got = append(got, "lit:"+s.literal)
		} else {
			got = append(got, string(s.verb)+":"+strings.Repeat("<", map[bool]int{true: 1}[s.left])+strings.Repeat(">", map[bool]int{false: 1}[s.left]))
		}
	}
	if strings.Join(got, ",") != "i:>,lit: ,P:<,lit:|,j:<,lit: ,lit:%" || specs[0].width != 18 || specs[2].width != 9 {
		t.Fatalf("parsed %v (%+v)", got, specs)
	}
	if specs[0].cell("12") != strings.Repeat(" ", 16)+"12" || specs[2].cell("astronomy-long") != "astronomy" {
		t.Fatalf("cells: %q %q", specs[0].cell("12"), specs[2].cell("astronomy-long"))
	}
	for _, bad := range []string{"%z", "%.18", "%5000i"} {
		if _, err := parseSqueueFormat(bad); err == nil {
			t.Errorf("--format %q was accepted", bad)
		}
	}
	for d, want := range map[time.Duration]string{0: "0:00", 65 * time.Second: "1:05", 3*time.Hour + 4*time.Second: "3:00:04", 50 * time.Hour: "2-02:00:00"} {
		if got := squeueTime(d); got != want {
			t.Errorf("squeueTime(%v) = %q, want %q", d, got, want)
		}
	}
	for wait, want := range map[longfairv1.JobWait]string{
		longfairv1.JobWait_JOB_WAIT_DEPENDENCY: "Dependency", longfairv1.JobWait_JOB_WAIT_HELD: "JobHeldUser",
		longfairv1.JobWait_JOB_WAIT_THROTTLE: "JobArrayTaskLimit", longfairv1.JobWait_JOB_WAIT_ROOM: "Priority",
	} {
		if got := waitReason(&longfairv1.JobExplanation{Wait: wait, Rank: 2}); got != want {
			t.Errorf("%v: %s, want %s", wait, got, want)
		}
	}
	if got := waitReason(&longfairv1.JobExplanation{Wait: longfairv1.JobWait_JOB_WAIT_NO_ROOM, Rank: 1}); got != "Resources" {
		t.Errorf("first ranked with no room: %s", got)
	}
}

func TestPeriodCuts(t *testing.T) {
	loc := time.Local
	from := time.Date(2026, 1, 30, 15, 0, 0, 0, loc) // a Friday
	to := time.Date(2026, 3, 2, 9, 0, 0, 0, loc)
	months, err := periodCuts("month", from, to)
	if err != nil || len(months) != 2 || !months[0].Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, loc)) || !months[1].Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, loc)) {
		t.Fatalf("months: %v, %v", months, err)
	}
	weeks, _ := periodCuts("week", from, to)
	if len(weeks) != 5 || weeks[0].Weekday() != time.Monday || !weeks[0].Equal(time.Date(2026, 2, 2, 0, 0, 0, 0, loc)) {
		t.Fatalf("weeks: %v", weeks)
	}
	days, _ := periodCuts("day", from, to)
	if len(days) != 31 {
		t.Fatalf("%d day cuts from Jan 30 15:00 to Mar 2 09:00, want 31", len(days))
	}
	if cuts, err := periodCuts("", from, to); err != nil || cuts != nil {
		t.Fatalf("no --per: %v, %v", cuts, err)
	}
	if _, err := periodCuts("fortnight", from, to); err == nil {
		t.Error("--per fortnight was accepted")
	}
	if _, err := periodCuts("day", from, from.AddDate(5, 0, 0)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("five years by day: %v", err)
	}
}

// fieldValue is sacct's field name's cell function.
func fieldValue(t *testing.T, name string) func(*acctRow) string {
	t.Helper()
	for _, f := range sacctFields() {
		if f.name == name {
			return f.value
		}
	}
	t.Fatalf("sacct has no field %s", name)
	return nil
}
