package server_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// Issue 13 item 4 through the API: a worker reports one attempt measured
// and one not; the usage report counts one of two measured and compares
// its CPU seconds with its allocation, and the journal's charge lines carry
// the measurement (only on the measured one), joined from the attempt.
func TestUsageReportAndJournalShowMeasuredUsage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "seff")
	w := newProtoWorker(t, c, "m1", map[string]float64{"cpu": 4, "mem": 1 << 30})
	w.connect(ctx, true, nil, nil)
	testcluster.WaitNodesUp(ctx, t, leader, "m1")

	const cores, mem = 2, 256 << 20
	start := time.Now()
	resp, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(ctx, testcluster.ShellJob(account, user, "seff", 2, map[string]float64{"cpu": cores, "mem": mem}, time.Hour, "true"))
	if err != nil {
		t.Fatal(err)
	}
	job := resp.GetJob().GetId()
	w.assignments(ctx, 2)
	runtime, used, peak := 10*time.Second, 12.5, int64(100<<20)
	measured := w.event(server.Key(job, 0, 1), longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, runtime)
	measured.CpuSeconds, measured.PeakMemBytes = used, peak
	w.send(measured, w.event(server.Key(job, 1, 1), longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, 0, runtime))
	w.waitAck(ctx, w.seq)

	ledgerc := longfairv1.NewLedgerClient(c.Conn(leader))
	report, err := ledgerc.UsageReport(ctx, &longfairv1.UsageReportRequest{
		From: timestamppb.New(start.Add(-time.Minute)), To: timestamppb.New(time.Now().Add(time.Minute)),
		GroupBy: longfairv1.UsageGroupBy_USAGE_GROUP_BY_ACCOUNT, Account: account,
	})
	if err != nil {
		t.Fatal(err)
	}
	alloc := cores * runtime.Seconds()
	if rows := report.GetRows(); len(rows) != 1 || rows[0].GetEndedTasks() != 2 || rows[0].GetMeasuredTasks() != 1 ||
		rows[0].GetCpuUsedSeconds() != used || rows[0].GetCpuAllocatedSeconds() != alloc ||
		rows[0].GetPeakMemBytes() != peak || rows[0].GetPeakMemRequestedBytes() != mem {
		t.Fatalf("usage report rows %v; want 1 of 2 measured, %v of %v CPU seconds, peak %d of %d", rows, used, alloc, peak, mem)
	}

	journal, err := ledgerc.ListJournal(ctx, &longfairv1.ListJournalRequest{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	charges := map[string]*longfairv1.JournalEntry{}
	for _, e := range journal.GetEntries() {
		if e.GetKind() == "charge" {
			charges[e.GetId()] = e
		} else if e.CpuSeconds != nil || e.PeakMemBytes != nil {
			t.Errorf("a %s entry carries usage: %v", e.GetKind(), e)
		}
	}
	m, u := charges["job-"+strconv.FormatUint(job, 10)+".task-0.attempt-1"], charges["job-"+strconv.FormatUint(job, 10)+".task-1.attempt-1"]
	if m == nil || u == nil {
		t.Fatalf("charges %v: want one per attempt", charges)
	}
	if m.GetCpuSeconds() != used || m.GetCpuAllocatedSeconds() != alloc || m.GetPeakMemBytes() != peak || m.GetMemRequestedBytes() != mem {
		t.Errorf("measured charge line %v; want %v of %v CPU seconds, peak %d of %d", m, used, alloc, peak, mem)
	}
	if u.CpuSeconds != nil || u.CpuAllocatedSeconds != nil || u.PeakMemBytes != nil || u.MemRequestedBytes != nil {
		t.Errorf("unmeasured charge line carries usage: %v", u)
	}
}
