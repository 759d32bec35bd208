package sched

import (
	"runtime"
	"testing"
)

// gangBenchView is benchView with a tenth of the job arrays made parallel:
// each task spans 8 to 64 nodes (a power of two), its drawn demand on each.
func gangBenchView(policy Policy, backfill Backfill) *View {
	v := benchView(policy)
	v.Settings.Backfill = backfill
	n := 0
	for a := range v.Accounts {
		for j := range v.Accounts[a].Queue {
			job := &v.Accounts[a].Queue[j]
			if (a*10+j)%10 != 3 {
				continue
			}
			spanNodes(job, 8<<(n%4))
			n++
		}
	}
	return v
}

// BenchmarkGangPlacement measures a full pass at the scale (1,000
// accounts, 10,000 nodes, 100,000 pending tasks) with a tenth of the jobs
// spanning 8 to 64 nodes, and reports nanoseconds per node placed (a
// parallel task counts each of its nodes; goal ≤ 2 µs, exact), with EASY
// backfill and without.
func BenchmarkGangPlacement(b *testing.B) {
	for _, bf := range []Backfill{BackfillGreedy, BackfillEASY} {
		for _, p := range []Policy{HMRF, DRF} {
			b.Run(string(p)+"/"+string(bf), func(b *testing.B) {
				v := gangBenchView(p, bf)
				eng := NewEngine()
				nodes, tasks := 0, 0
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.ResetTimer()
				for range b.N {
					ps, err := eng.Schedule(v)
					if err != nil {
						b.Fatal(err)
					}
					for _, p := range ps {
						nodes += max(len(p.Nodes), 1)
					}
					tasks += len(ps)
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				if nodes == tasks {
					b.Fatal("no parallel task was placed")
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(nodes), "ns/node-placed")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(tasks), "allocs/task")
				b.ReportMetric(float64(tasks)/float64(b.N), "tasks/pass")
				b.ReportMetric(float64(nodes)/float64(b.N), "nodes/pass")
			})
		}
	}
}
