package reproduce

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

var bpfConfig = sim.Config{Settings: sched.Settings{Quantum: time.Minute, Placement: sched.Affinity}}

// small keeps the tests to seconds: a quarter of the paper's cluster and
// six bursts.
var small = BPFScenarioOptions{Nodes: 10, Bursts: 6, Seed: 1}

func TestBPFLatencyQueueIsNearSPAndFarAheadOfDRF(t *testing.T) {
	counts := []int{1, 8}
	cs, err := BPFByThroughputQueues(small, counts, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteBPFByThroughputQueues(&b, cs, counts); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	factors := make([]float64, len(cs))
	for i, c := range cs {
		d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
		if p.Queues[0].Class != sched.Hard {
			t.Errorf("%d TQs: the latency queue is %v, want hard (%s)", counts[i], p.Queues[0].Class, p.Admissions[0].Reason)
		}
		if got := ratio(p.LatencyCompletion(), s.LatencyCompletion()); got > 1.1 {
			t.Errorf("%d TQs: bpf's latency jobs take %.2f× sp's, want close to sp", counts[i], got)
		}
		factors[i] = ratio(d.LatencyCompletion(), p.LatencyCompletion())
	}
	// The paper's Table 3: the factor grows with the number of TQs
	// (1.18 with one, 4.66–5.38 with eight).
	if factors[0] < 1 || factors[1] < 2 || factors[1] <= factors[0] {
		t.Errorf("drf/bpf factors %.2f (1 TQ) and %.2f (8 TQs): want ≥ 1, growing, and ≥ 2 with 8", factors[0], factors[1])
	}
}

func TestBPFProtectsThroughputQueuesWhereSPDoesNot(t *testing.T) {
	scales := []int{1, 8}
	cs, err := BPFByBurstScale(small, scales, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteBPFByBurstScale(&b, cs, scales); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	big := cs[1]
	d, s, p := big.Run(sched.DRF), big.Run(sched.SP), big.Run(sched.BPF)
	// The paper's Figure 7: with 8× bursts sp starves the batch jobs, bpf
	// keeps them close to drf.
	if got := ratio(s.ThroughputCompletion(), p.ThroughputCompletion()); got < 1.2 {
		t.Errorf("8× bursts: sp's batch jobs take %.2f× bpf's, want bpf to protect them", got)
	}
	if got := ratio(p.ThroughputCompletion(), d.ThroughputCompletion()); got > 1.1 {
		t.Errorf("8× bursts: bpf's batch jobs take %.2f× drf's, want close to drf", got)
	}
	// Figure 8: throughput queues keep their long-term share under bpf.
	if p.ThroughputShare() < 0.95*d.ThroughputShare() || s.ThroughputShare() >= p.ThroughputShare() {
		t.Errorf("8× bursts: throughput queues' long-term share drf %.3f, sp %.3f, bpf %.3f: want bpf ≈ drf > sp",
			d.ThroughputShare(), s.ThroughputShare(), p.ThroughputShare())
	}
	if s.LatencyShare() <= p.LatencyShare() {
		t.Errorf("8× bursts: the latency queue's share under sp %.3f is not above bpf's %.3f: sp should be unbounded", s.LatencyShare(), p.LatencyShare())
	}
}

func TestBPFThreeLatencyQueues(t *testing.T) {
	lw, err := BPFThreeQueues(10, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareBPF(lw, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteBPFQueues(&b, c); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
	for i, want := range []sched.QueueClass{sched.Elastic, sched.Hard, sched.Soft, sched.Elastic} {
		if got := p.Queues[i].Class; got != want {
			t.Errorf("%s admitted as %v, the paper has %v", p.Queues[i].Name, got, want)
		}
	}
	// Figure 10: "BPF even outperforms SP for LQ-0 and LQ-1 jobs and does
	// not hurt any TQ".
	for i := 1; i <= 2; i++ {
		if p.Queues[i].MeanCompletion > d.Queues[i].MeanCompletion || p.Queues[i].MeanCompletion > s.Queues[i].MeanCompletion {
			t.Errorf("%s (%v): bpf %v, drf %v, sp %v: the guarantee should serve it best", p.Queues[i].Name, p.Queues[i].Class,
				p.Queues[i].MeanCompletion, d.Queues[i].MeanCompletion, s.Queues[i].MeanCompletion)
		}
	}
	if got := ratio(p.Queues[0].MeanCompletion, d.Queues[0].MeanCompletion); got > 1.02 {
		t.Errorf("TQ-0: bpf's jobs take %.3f× drf's: bpf should not hurt the throughput queue", got)
	}
}

func TestRunLatencyCountsUsageOfTheCurrentBurst(t *testing.T) {
	// One latency queue declaring 2 CPUs for 10 s every 100 s, whose job is
	// 4 tasks of 10 s on a 4-CPU node beside a backlogged throughput queue.
	// bpf serves 2 tasks under the guarantee; the other 2 get only room the
	// throughput queue leaves, once its backlog runs out.
	w := &sim.Workload{
		Name: "one burst", Resources: []string{"cpu"},
		Nodes:    []sim.Node{{ID: "n", Capacity: ledger.Vector{4}}},
		Accounts: []sim.Account{{Name: "LQ", Weight: 1}, {Name: "TQ", Weight: 1}},
		Jobs: []sim.Job{
			{ID: 1, Account: 1, Demand: ledger.Vector{1}, Tasks: 12, Runtime: 10 * time.Second},
			{ID: 2, Account: 0, Submit: ledger.Time(5 * time.Second), Demand: ledger.Vector{1}, Tasks: 4, Runtime: 10 * time.Second},
		},
	}
	lw := &sim.LatencyWorkload{Workload: w, Latency: []*sched.LatencySpec{
		{Start: ledger.Time(5 * time.Second), Period: 100 * time.Second, Deadline: 10 * time.Second, Burst: ledger.Vector{2}}, nil,
	}}
	var starts []string
	cfg := bpfConfig
	cfg.Settings.Policy = sched.BPF
	cfg.Trace = func(e sim.TraceEvent) {
		for range e.Tasks * btoi(e.Kind == sim.Start) {
			starts = append(starts, time.Duration(e.Time).String()+":"+w.Accounts[w.Jobs[e.Job].Account].Name)
		}
	}
	res, err := sim.RunLatency(lw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Admissions[0].Class != sched.Hard {
		t.Fatalf("the latency queue is %v: %s", res.Admissions[0].Class, res.Admissions[0].Reason)
	}
	// 0 s: TQ takes all 4 CPUs. 5 s: the burst arrives and waits. 10 s:
	// they end; LQ gets the 2 CPUs of its burst, TQ the other 2. 20 s: the
	// burst has had 2×10 CPU-s, its d·t, so the TQ takes everything. 30 s:
	// the TQ's last 2 tasks, and the LQ's last 2 in the room left over.
	want := "0s:TQ 0s:TQ 0s:TQ 0s:TQ 10s:LQ 10s:LQ 10s:TQ 10s:TQ 20s:TQ 20s:TQ 20s:TQ 20s:TQ 30s:TQ 30s:TQ 30s:LQ 30s:LQ"
	if got := strings.Join(starts, " "); got != want {
		t.Errorf("starts\n %s\nwant\n %s", got, want)
	}
}

func TestLatencyWorkloadIsValidated(t *testing.T) {
	lw, err := BPFScenario(BPFScenarioOptions{Nodes: 2, Throughput: 1, Bursts: 1})
	if err != nil {
		t.Fatal(err)
	}
	lw.Latency = lw.Latency[:1]
	if _, err := sim.RunLatency(lw, bpfConfig); err == nil || !strings.Contains(err.Error(), "latency declarations") {
		t.Errorf("missing declarations: %v", err)
	}
	if _, err := BPFScenario(BPFScenarioOptions{Period: time.Second}); err == nil {
		t.Error("a period shorter than the deadline was accepted")
	}
	if _, err := BPFScenario(BPFScenarioOptions{Nodes: -1}); err == nil {
		t.Error("negative nodes accepted")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
