package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/shareddata"
	"github.com/longfair/longfair/sched"
)

// swfLogs are the Parallel Workloads Archive logs in ../shared/data that
// the backfill comparison replays.
var swfLogs = []string{
	"KTH-SP2-1996-2.1-cln.swf.gz",
	"SDSC-SP2-1998-4.2-cln.swf.gz",
	"HPC2N-2002-2.2-alea-subset.swf",
	"LANL-CM5-1994-4.1-cln.swf.gz",
}

// swfPrefixJobs is how many jobs of each log the tests replay: the first
// 3,000 keep the four logs × two policies × two modes within seconds; the
// full logs are BenchmarkSWFBackfill's and the README's.
const swfPrefixJobs = 3000

// loadSWFPrefix loads the first n jobs of a shared log on its nodes, or
// skips the test when the shared data folder is absent.
func loadSWFPrefix(tb testing.TB, name string, n int) *Workload {
	tb.Helper()
	w, _, err := LoadSWFFile(shareddata.Path(tb, name), SWFOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if n > 0 && len(w.Jobs) > n {
		w.Jobs = w.Jobs[:n]
	}
	return w
}

// backfillRuns replays w under hmrf and drf, each without and with EASY
// backfill: results[policy][0] is none, [1] easy.
func backfillRuns(tb testing.TB, w *Workload) map[sched.Policy][2]*Result {
	tb.Helper()
	out := map[sched.Policy][2]*Result{}
	for _, p := range []sched.Policy{sched.HMRF, sched.DRF} {
		var pair [2]*Result
		for i, bf := range []sched.Backfill{sched.BackfillNone, sched.BackfillEASY} {
			s := sched.DefaultSettings()
			s.Policy, s.Backfill = p, bf
			res, err := Run(w, Config{Settings: s})
			if err != nil {
				tb.Fatalf("%s under %s, backfill %s: %v", w.Name, p, bf, err)
			}
			pair[i] = res
		}
		out[p] = pair
	}
	return out
}

func describe(r *Result) string {
	return fmt.Sprintf("util %.1f%%, mean wait %v, max wait %v, bounded slowdown %.2f",
		100*r.Utilization[0], r.MeanWait.Round(time.Second), r.MaxWait.Round(time.Second), r.MeanBoundedSlowdown)
}

// On the real logs, jobs spanning nodes, no job waits forever under either
// mode: every job the log holds completes, and the longest wait is shorter
// than the replay.
func TestSWFLogsRunEveryJobWithAndWithoutBackfill(t *testing.T) {
	for _, name := range swfLogs {
		t.Run(name, func(t *testing.T) {
			w := loadSWFPrefix(t, name, swfPrefixJobs)
			parallel := 0
			for i := range w.Jobs {
				if w.Jobs[i].Nodes > 1 {
					parallel++
				}
			}
			if parallel == 0 {
				t.Fatalf("no job of %d spans nodes: the replay would not test parallel jobs", len(w.Jobs))
			}
			for p, pair := range backfillRuns(t, w) {
				for _, r := range pair {
					t.Logf("%s %s: %s", p, backfillName(r.Settings.Backfill), describe(r))
					if r.UnfinishedTasks != 0 || len(r.Unschedulable) != 0 || r.CompletedJobs != len(w.Jobs) {
						t.Errorf("%s %s: %d of %d jobs completed, %d tasks unfinished, %d unschedulable",
							p, r.Settings.Backfill, r.CompletedJobs, len(w.Jobs), r.UnfinishedTasks, len(r.Unschedulable))
					}
					if r.MaxWait <= 0 || r.MaxWait >= r.Makespan {
						t.Errorf("%s %s: longest wait %v, replay %v", p, r.Settings.Backfill, r.MaxWait, r.Makespan)
					}
				}
			}
		})
	}
}
