package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/fsm"
)

// BenchmarkHistory measures what grows with a centre's history, at each
// size in LONGFAIR_BENCH_HISTORY (task attempts, comma-separated; default
// 1000000): filling it, verifying the SU journal, saving a snapshot and
// restoring it into a new FSM (what a new server does), the FSM's heap,
// a usage report over the last month, the newest 50 jobs, of all and of
// one account, and the jobs active in the last month (sacct's selection)
// against every job (what sacct read before ListJobs took a window). Issue 15's goals at 10 million attempts: verify ≤ 60 s,
// snapshot ≤ 30 s, restore ≤ 60 s, memory ≤ 2 GiB, the month's report
// ≤ 1 s, the listing ≤ 50 ms.
func BenchmarkHistory(b *testing.B) {
	sizes := "1000000"
	if s := os.Getenv("LONGFAIR_BENCH_HISTORY"); s != "" {
		sizes = s
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("LONGFAIR_BENCH_HISTORY=%q: want attempt counts, e.g. 1000000,3000000", sizes)
		}
		b.Run(fmt.Sprintf("attempts=%d", n), func(b *testing.B) { benchmarkHistory(b, n) })
	}
}

func benchmarkHistory(b *testing.B, attempts int) {
	spec := CentreYear(attempts)
	dir := b.TempDir()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := fsm.Open(fsm.Options{Dir: filepath.Join(dir, "a")})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	t0 := time.Now()
	if _, err := Fill(context.Background(), f, spec); err != nil {
		b.Fatal(err)
	}
	fill := time.Since(t0)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		report, err := f.Verify()
		if err != nil {
			b.Fatal(err)
		}
		verify := time.Since(start)

		snapPath := filepath.Join(dir, "snap")
		start = time.Now()
		snapBytes := saveSnapshot(b, f, snapPath)
		snapshot := time.Since(start)

		g, err := fsm.Open(fsm.Options{Dir: filepath.Join(dir, "b")})
		if err != nil {
			b.Fatal(err)
		}
		rc, err := os.Open(snapPath)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := g.Restore(rc); err != nil {
			b.Fatal(err)
		}
		restore := time.Since(start)
		g.Close()
		os.RemoveAll(filepath.Join(dir, "b"))

		end := spec.Start.Add(spec.Span)
		start = time.Now()
		rows, err := f.Usage(fsm.UsageQuery{From: end.Add(-30 * 24 * time.Hour), To: end})
		if err != nil || len(rows) == 0 {
			b.Fatalf("the month's usage report: %d rows, %v", len(rows), err)
		}
		usage := time.Since(start)

		start = time.Now()
		jobs, _, err := f.Jobs(fsm.JobFilter{Limit: 50})
		if err != nil || len(jobs) != 50 {
			b.Fatalf("the newest 50 jobs: %d, %v", len(jobs), err)
		}
		list := time.Since(start)
		start = time.Now()
		perAccount := (attempts + spec.TasksPerJob - 1) / spec.TasksPerJob / spec.Accounts
		if jobs, _, err = f.Jobs(fsm.JobFilter{Account: "acct007", Limit: 50}); err != nil || len(jobs) != min(50, perAccount) {
			b.Fatalf("the newest 50 jobs of an account: %d, %v", len(jobs), err)
		}
		listAccount := time.Since(start)

		// sacct over the last month reads the jobs active in it, a page
		// of 1,000 at a time; before ListJobs took a window, it read
		// every job of the history.
		month := fsm.JobFilter{Since: end.Add(-30 * 24 * time.Hour), Until: end}
		// Both timed with the state file's pages in memory, as on a
		// server that has been serving.
		listAll(b, f, fsm.JobFilter{})
		start = time.Now()
		monthJobs := listAll(b, f, month)
		listMonth := time.Since(start)
		start = time.Now()
		allJobs := listAll(b, f, fsm.JobFilter{})
		listEvery := time.Since(start)
		if monthJobs == 0 || monthJobs >= allJobs {
			b.Fatalf("the month holds %d of %d jobs", monthJobs, allJobs)
		}

		b.ReportMetric(fill.Seconds(), "s-fill")
		b.ReportMetric(float64(report.Entries), "journal-entries")
		b.ReportMetric(verify.Seconds(), "s-verify")
		b.ReportMetric(snapshot.Seconds(), "s-snapshot")
		b.ReportMetric(float64(snapBytes)/(1<<20), "MiB-snapshot")
		b.ReportMetric(restore.Seconds(), "s-restore")
		b.ReportMetric(float64(after.HeapInuse-min(before.HeapInuse, after.HeapInuse))/(1<<20), "MiB-heap")
		b.ReportMetric(float64(usage.Microseconds())/1000, "ms-usage-month")
		b.ReportMetric(float64(list.Microseconds())/1000, "ms-jobs50")
		b.ReportMetric(float64(listAccount.Microseconds())/1000, "ms-jobs50-account")
		b.ReportMetric(float64(monthJobs), "jobs-month")
		b.ReportMetric(float64(listMonth.Microseconds())/1000, "ms-jobs-month")
		b.ReportMetric(float64(listEvery.Microseconds())/1000, "ms-jobs-every")
	}
}

// listAll lists every job q selects, a page of 1,000 at a time, and
// returns how many there were.
func listAll(b *testing.B, f *fsm.FSM, q fsm.JobFilter) int {
	n := 0
	for q.Limit = 1000; ; {
		page, next, err := f.Jobs(q)
		if err != nil {
			b.Fatalf("jobs %+v: %v", q, err)
		}
		n += len(page)
		if next == 0 {
			return n
		}
		q.Before = next
	}
}

// saveSnapshot writes f's snapshot to path and returns its size.
func saveSnapshot(b *testing.B, f *fsm.FSM, path string) int64 {
	snap, err := f.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	defer snap.Release()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	sink := &fileSink{File: out}
	if err := snap.Persist(sink); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// fileSink is a raft.SnapshotSink that writes a file.
type fileSink struct{ *os.File }

func (s *fileSink) ID() string    { return "bench" }
func (s *fileSink) Cancel() error { return s.Close() }
