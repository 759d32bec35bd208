package sched

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkTreePlacement measures hdrf, dff and fawkes passes at the
// engine's benchmark scale (1,000 accounts, 10,000 nodes, 100,000 pending
// tasks), the accounts arranged in 10 organisations of 10 groups each, and
// reports nanoseconds and allocations per placement.
func BenchmarkTreePlacement(b *testing.B) {
	for _, p := range []Policy{HDRF, DFF, Fawkes} {
		b.Run(string(p), func(b *testing.B) {
			v := benchView(p)
			for o := range 10 {
				org := fmt.Sprintf("org%d", o)
				v.Groups = append(v.Groups, Group{Path: org, Weight: float64(1 + o%3)})
				for g := range 10 {
					v.Groups = append(v.Groups, Group{Path: fmt.Sprintf("%s/g%d", org, g), Weight: float64(1 + g%4)})
				}
			}
			for i := range v.Accounts {
				v.Accounts[i].Group = fmt.Sprintf("org%d/g%d", i%10, (i/10)%10)
				if p == Fawkes {
					v.Accounts[i].Share = 1 / float64(len(v.Accounts))
				}
			}
			eng := NewEngine()
			placed := 0
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				ps, err := eng.Schedule(v)
				if err != nil {
					b.Fatal(err)
				}
				placed += len(ps)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			if placed == 0 {
				b.Fatal("nothing placed")
			}
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(placed), "allocs/placement")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(placed), "ns/placement")
			b.ReportMetric(float64(placed)/float64(b.N), "placements/pass")
		})
	}
}
