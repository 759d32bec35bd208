package sim

import (
	"testing"
	"time"

	"github.com/longfair/longfair/sched"
)

// BenchmarkReplay1M replays 1,000,000 tasks (16 accounts, 256 nodes of
// <32 cores, 128 GB>, offered load 95%) under H-MRF and reports the seconds
// one replay takes (goal: under 10 s), the CPU seconds it used (the box is
// shared, so wall time alone can mislead) and the events applied per second.
func BenchmarkReplay1M(b *testing.B) {
	benchmarkReplay(b, SyntheticOptions{Tasks: 1_000_000, Seed: 1}, sched.HMRF)
}

// BenchmarkReplay100k is the same at a tenth of the size, for quick runs.
func BenchmarkReplay100k(b *testing.B) {
	for _, p := range []sched.Policy{sched.HMRF, sched.DRF, sched.Static} {
		b.Run(string(p), func(b *testing.B) {
			benchmarkReplay(b, SyntheticOptions{Tasks: 100_000, Seed: 1}, p)
		})
	}
}

func benchmarkReplay(b *testing.B, opt SyntheticOptions, p sched.Policy) {
	w, err := Synthetic(opt)
	if err != nil {
		b.Fatal(err)
	}
	s := sched.DefaultSettings()
	s.Policy = p
	b.ResetTimer()
	var res *Result
	start := time.Now()
	cpu0, cpuOK := processCPU()
	for range b.N {
		if res, err = Run(w, Config{Settings: s}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start).Seconds() / float64(b.N)
	cpu1, _ := processCPU()
	if res.UnfinishedTasks != 0 {
		b.Fatalf("%d tasks unfinished", res.UnfinishedTasks)
	}
	b.ReportMetric(elapsed, "s/replay")
	if cpuOK {
		b.ReportMetric((cpu1-cpu0)/float64(b.N), "cpu-s/replay")
	}
	b.ReportMetric(float64(res.Events)/elapsed, "events/s")
	b.ReportMetric(float64(res.Placements)/elapsed, "tasks/s")
	b.ReportMetric(float64(res.Passes), "passes")
}

// BenchmarkSWFBackfill1M replays a million jobs shaped like a real log
// with EASY backfill under hmrf (goal: under 10 s): the KTH-SP2 log on its
// 100 nodes, repeated back to back (each copy submitted after the previous
// one's span, its job numbers shifted) until it holds 1,000,000 jobs; no
// log in ../shared/data has that many. It reports seconds per replay, the
// CPU seconds it used (the box is shared) and jobs per second.
func BenchmarkSWFBackfill1M(b *testing.B) { benchmarkSWFBackfill(b, 1_000_000) }

// BenchmarkSWFBackfill100k is the same at a tenth of the size, for quick
// runs.
func BenchmarkSWFBackfill100k(b *testing.B) { benchmarkSWFBackfill(b, 100_000) }

func BenchmarkSWFBackfill300k(b *testing.B) { benchmarkSWFBackfill(b, 300_000) }

func benchmarkSWFBackfill(b *testing.B, jobs int) {
	w := loadSWFPrefix(b, "KTH-SP2-1996-2.1-cln.swf.gz", 0)
	w = repeatJobs(w, jobs)
	s := sched.DefaultSettings()
	s.Backfill = sched.BackfillEASY
	b.ResetTimer()
	var res *Result
	var err error
	start := time.Now()
	cpu0, cpuOK := processCPU()
	for range b.N {
		if res, err = Run(w, Config{Settings: s}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start).Seconds() / float64(b.N)
	cpu1, _ := processCPU()
	if res.CompletedJobs != len(w.Jobs) {
		b.Fatalf("%d of %d jobs completed", res.CompletedJobs, len(w.Jobs))
	}
	b.ReportMetric(elapsed, "s/replay")
	if cpuOK {
		b.ReportMetric((cpu1-cpu0)/float64(b.N), "cpu-s/replay")
	}
	b.ReportMetric(float64(len(w.Jobs))/elapsed, "jobs/s")
	b.ReportMetric(float64(res.Passes), "passes")
}

// repeatJobs returns w with its jobs repeated back to back until there are
// n: copy k is submitted k spans later (span: the last submission after the
// first, plus a day) with its job numbers shifted past the previous copy's.
func repeatJobs(w *Workload, n int) *Workload {
	first, last := w.Jobs[0].Submit, w.Jobs[0].Submit
	var maxID uint64
	for i := range w.Jobs {
		first, last = min(first, w.Jobs[i].Submit), max(last, w.Jobs[i].Submit)
		maxID = max(maxID, w.Jobs[i].ID)
	}
	span := last.Sub(first) + 24*time.Hour
	out := *w
	out.Jobs = make([]Job, 0, n)
	for k := 0; len(out.Jobs) < n; k++ {
		for _, j := range w.Jobs {
			if len(out.Jobs) == n {
				break
			}
			j.Submit = j.Submit.Add(time.Duration(k) * span)
			j.ID += uint64(k) * (maxID + 1)
			out.Jobs = append(out.Jobs, j)
		}
	}
	return &out
}
