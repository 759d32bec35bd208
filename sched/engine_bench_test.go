package sched

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// benchView is the scale: 1,000 accounts, 10,000 nodes (a tenth of
// them with MIC) and 100,000 pending tasks in 10,000 job arrays.
func benchView(policy Policy) *View {
	r := rand.New(rand.NewPCG(42, 42))
	v := &View{
		Now:       ledger.Time(time.Hour),
		Resources: []string{"cpu", "mem", "mic"},
		Settings:  Settings{Policy: policy, Quantum: time.Minute, Placement: Affinity, Timeout: 24 * time.Hour},
	}
	for i := range 10000 {
		c := ledger.Vector{32, 128, 0}
		if i%10 == 0 {
			c = ledger.Vector{64, 96, 4}
		}
		v.Nodes = append(v.Nodes, Node{ID: "node", Capacity: c, Free: c.Clone()})
	}
	for i := range 1000 {
		a := Account{Name: "acct", Weight: float64(1 + r.IntN(10)),
			Running: ledger.Vector{0, 0, 0}, Usage: ledger.Vector{r.Float64() * 1e6, r.Float64() * 4e6, 0},
			Baseline: ledger.Vector{r.Float64() * 1e6, r.Float64() * 4e6, 0}, BaselineRate: ledger.Vector{100, 400, 0}}
		for j := range 10 {
			d := ledger.Vector{float64(1 + r.IntN(4)), float64(1 + r.IntN(16)), 0}
			if (i+j)%50 == 0 {
				d[2] = 1
			}
			a.Queue = append(a.Queue, Job{ID: uint64(i*10 + j), Demand: d, Pending: 10})
		}
		v.Accounts = append(v.Accounts, a)
	}
	return v
}

// benchSchedule runs full passes over v and reports nanoseconds and
// allocations per placement, and placements per pass.
func benchSchedule(b *testing.B, v *View) {
	b.Helper()
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
}

// BenchmarkPlacement measures a full pass at the scale and reports
// nanoseconds and allocations per placement (goal: under 2 µs).
func BenchmarkPlacement(b *testing.B) {
	for _, p := range []Policy{HMRF, DRF, LTAF, Static} {
		b.Run(string(p), func(b *testing.B) {
			v := benchView(p)
			benchSchedule(b, v)
		})
	}
}
