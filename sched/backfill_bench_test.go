package sched

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// backfillBenchView is a busy centre: 10,000 nodes of <32 cores, 128 GB>,
// each running one task that holds 24 cores and 96 GB until a random time
// within the next 24 hours (10,000 releases), and 1,000 accounts whose
// queues start with jobs of 1–64 nodes, a tenth of them wide (8–64 nodes
// of 16 cores), the rest one-node tasks; walltimes from minutes to a day.
// The first-ranked wide job cannot start, so every pass reserves for it
// (merging and sorting all 10,000 releases) and backfills around it.
func backfillBenchView() *View {
	r := rand.New(rand.NewPCG(7, 7))
	now := ledger.Time(100 * time.Hour)
	v := &View{
		Now: now, Resources: []string{"cpu", "mem"},
		Settings: Settings{Policy: HMRF, Quantum: time.Minute, Placement: BestFit, Backfill: BackfillEASY},
	}
	for range 10000 {
		at := now.Add(time.Duration(1+r.IntN(24*3600)) * time.Second)
		v.Nodes = append(v.Nodes, Node{ID: "node", Capacity: ledger.Vector{32, 128}, Free: ledger.Vector{8, 32},
			Releases: []Release{{At: at, Free: ledger.Vector{24, 96}}}})
	}
	for i := range 1000 {
		a := Account{Name: "acct", Weight: float64(1 + r.IntN(10)),
			Running: ledger.Vector{0, 0}, Usage: ledger.Vector{r.Float64() * 1e6, r.Float64() * 4e6},
			Baseline: ledger.Vector{r.Float64() * 1e6, r.Float64() * 4e6}, BaselineRate: ledger.Vector{100, 400}}
		for j := range 10 {
			wall := time.Duration(5+r.IntN(24*60)) * time.Minute
			job := Job{ID: uint64(i*10 + j), Pending: 1 + r.IntN(4), Walltime: wall}
			if (i+j)%10 == 0 {
				n := 8 + r.IntN(57)
				job.Nodes, job.PerNode = n, ledger.Vector{16, 64}
				job.Demand = ledger.Vector{16 * float64(n), 64 * float64(n)}
			} else {
				job.Demand = ledger.Vector{float64(1 + r.IntN(8)), float64(1 + r.IntN(32))}
			}
			a.Queue = append(a.Queue, job)
		}
		v.Accounts = append(v.Accounts, a)
	}
	return v
}

// BenchmarkBackfillPass is one EASY pass over 10,000 running tasks'
// releases (goal: backfill planning ≤ 10 ms per pass), reporting ms/pass
// and what the pass placed; the same pass filling greedily shows what the
// reservation and its bookkeeping cost, the rest being the pass's own
// placements.
func BenchmarkBackfillPass(b *testing.B) {
	for _, mode := range []Backfill{BackfillGreedy, BackfillEASY} {
		b.Run(string(mode), func(b *testing.B) { benchBackfillPass(b, mode) })
	}
}

func benchBackfillPass(b *testing.B, mode Backfill) {
	v := backfillBenchView()
	v.Settings.Backfill = mode
	eng := NewEngine()
	placed, reserved := 0, 0
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		ps, err := eng.Schedule(v)
		if err != nil {
			b.Fatal(err)
		}
		placed += len(ps)
		if _, ok := eng.LastReservation(); ok {
			reserved++
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if want := map[Backfill]int{BackfillGreedy: 0, BackfillEASY: b.N}[mode]; reserved != want {
		b.Fatalf("%d of %d passes reserved; the case must make one each pass", reserved, b.N)
	}
	b.ReportMetric(elapsed.Seconds()*1e3/float64(b.N), "ms/pass")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/pass")
}

// BenchmarkReservationPlanning times backfill's planning alone on the
// busy centre of BenchmarkBackfillPass: from a pass's set-up (not timed),
// the reservation of the job the pass reserves for — merging its 10,000
// running tasks' releases into the earliest time enough nodes are free,
// choosing the nodes and masking them in the index. The rest of an EASY
// pass is its 11,000 placements, which a pass without backfill makes too.
func BenchmarkReservationPlanning(b *testing.B) {
	v := backfillBenchView()
	eng := NewEngine()
	if _, err := eng.Schedule(v); err != nil {
		b.Fatal(err)
	}
	r, ok := eng.LastReservation()
	if !ok {
		b.Fatal("the pass made no reservation")
	}
	job := &v.Accounts[r.Account].Queue[r.Job]
	var planning time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := eng.prepare(v, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		eng.reserve(r.Account, r.Job, job)
		planning += time.Since(start)
		if !eng.resv.made {
			b.Fatal("reserve made no reservation")
		}
	}
	b.ReportMetric(planning.Seconds()*1e3/float64(b.N), "ms/plan")
}
