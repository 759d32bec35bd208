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
