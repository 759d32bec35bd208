package reproduce

import (
	"strings"
	"testing"

	"github.com/longfair/longfair/sched"
)

// TestBPFTables replays the BPF paper's experiments at the paper's scale (40
// nodes, 10 bursts) and logs the tables of the README's policy guide:
//
//	go test ./sim -run TestBPFTables -v
func TestBPFTables(t *testing.T) {
	if testing.Short() {
		t.Skip("the paper-scale tables take a few seconds")
	}
	full := BPFScenarioOptions{Seed: 1}
	var b strings.Builder

	counts := []int{1, 2, 4, 8}
	byTQ, err := BPFByThroughputQueues(full, counts, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteBPFByThroughputQueues(&b, byTQ, counts); err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	for i, c := range byTQ {
		d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
		f := ratio(d.LatencyCompletion(), p.LatencyCompletion())
		if f < prev || ratio(p.LatencyCompletion(), s.LatencyCompletion()) > 1.1 {
			t.Errorf("%d TQs: drf/bpf %.2f (previous %.2f), bpf/sp %.2f: want a growing factor and bpf close to sp",
				counts[i], f, prev, ratio(p.LatencyCompletion(), s.LatencyCompletion()))
		}
		prev = f
	}

	scales := []int{1, 2, 4, 8}
	byScale, err := BPFByBurstScale(full, scales, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	if err := WriteBPFByBurstScale(&b, byScale, scales); err != nil {
		t.Fatal(err)
	}
	last := byScale[len(byScale)-1]
	d, s, p := last.Run(sched.DRF), last.Run(sched.SP), last.Run(sched.BPF)
	if ratio(s.ThroughputCompletion(), p.ThroughputCompletion()) < 1.2 || p.ThroughputShare() < 0.95*d.ThroughputShare() {
		t.Errorf("8× bursts: sp/bpf batch completion %.2f, batch share bpf %.3f vs drf %.3f: want bpf to protect batch jobs",
			ratio(s.ThroughputCompletion(), p.ThroughputCompletion()), p.ThroughputShare(), d.ThroughputShare())
	}

	three, err := BPFThreeQueues(40, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareBPF(three, bpfConfig)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	if err := WriteBPFQueues(&b, c); err != nil {
		t.Fatal(err)
	}
	for i, want := range []sched.QueueClass{sched.Elastic, sched.Hard, sched.Soft, sched.Elastic} {
		if got := c.Run(sched.BPF).Queues[i].Class; got != want {
			t.Errorf("§5.2.5 queue %d admitted as %v, want %v", i, got, want)
		}
	}
	t.Log("\n" + b.String())
}
