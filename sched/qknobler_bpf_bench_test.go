package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// BenchmarkPlacementQKnoblerBPF measures full passes of qknobler (at several
// knobs) and bpf at the scale (benchView: 1,000 accounts, 10,000
// nodes, 100,000 pending tasks) and reports nanoseconds per placement, as
// BenchmarkPlacement does for the other policies. Under bpf every tenth
// account is a latency queue, half hard and half soft.
func BenchmarkPlacementQKnoblerBPF(b *testing.B) {
	cases := []struct {
		name string
		make func() *View
	}{
		{"qknobler-0", func() *View { v := benchView(QKnobler); return v }},
		{"qknobler-0.5", func() *View { v := benchView(QKnobler); v.Settings.QKnoblerRho = 0.5; return v }},
		{"qknobler-1", func() *View { v := benchView(QKnobler); v.Settings.QKnoblerRho = 1; return v }},
		{"bpf", func() *View { return withLatencyQueues(benchView(BPF)) }},
		{"sp", func() *View { return withLatencyQueues(benchView(SP)) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			v := c.make()
			benchSchedule(b, v)
		})
	}
}

func withLatencyQueues(v *View) *View {
	for i := 0; i < len(v.Accounts); i += 10 {
		class := Hard
		if i%20 == 10 {
			class = Soft
		}
		v.Accounts[i].Latency = &LatencyQueue{
			LatencySpec: LatencySpec{Period: 5 * time.Minute, Deadline: 30 * time.Second, Burst: ledger.Vector{400, 1600, 4}},
			Class:       class, Used: ledger.NewVector(3),
		}
	}
	return v
}

// BenchmarkAdmitQueue measures one admission decision on a cluster that has
// already admitted 10,000 latency and 10,000 throughput queues (the BPF
// paper's §5.2.4 measures admission for 20,000 queues at about 1 ms).
func BenchmarkAdmitQueue(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	resources := []string{"cpu", "mem"}
	capacity := ledger.Vector{1e6, 4e6}
	var admitted []AdmittedQueue
	for i := range 20000 {
		q := AdmittedQueue{QueueRequest: QueueRequest{Name: fmt.Sprintf("q%d", i), Weight: 1}}
		if i%2 == 0 {
			q.Latency = &LatencySpec{Start: ledger.Time(r.Int64N(int64(time.Hour))), Period: time.Duration(60+r.IntN(600)) * time.Second,
				Deadline: 10 * time.Second, Burst: ledger.Vector{1, 4}}
			q.Class = QueueClass(r.IntN(3))
		}
		admitted = append(admitted, q)
	}
	req := QueueRequest{Name: "new", Weight: 1, Latency: &LatencySpec{Period: 5 * time.Minute, Deadline: 10 * time.Second, Burst: ledger.Vector{2, 8}}}
	b.ResetTimer()
	for range b.N {
		if _, err := AdmitQueue(resources, capacity, admitted, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/admission")
}
