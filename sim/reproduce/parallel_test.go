package reproduce

import (
	"testing"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

// TestCompareBPFTracesEveryReplayThroughOneCaller gives CompareBPF a Trace
// that, like any written for Run, is not safe for concurrent use: the
// parallel replays must call it one at a time (go test -race finds it
// otherwise), and it must see every event of every replay.
func TestCompareBPFTracesEveryReplayThroughOneCaller(t *testing.T) {
	opt := small
	opt.Throughput = 1
	lw, err := BPFScenario(opt)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, p := range bpfPolicies {
		cfg := bpfConfig
		cfg.Settings.Policy = p
		cfg.Trace = func(sim.TraceEvent) { want++ }
		if _, err := sim.RunLatency(lw, cfg); err != nil {
			t.Fatal(err)
		}
	}
	got, byKind := 0, map[sim.TraceKind]int{}
	cfg := bpfConfig
	cfg.Trace = func(e sim.TraceEvent) {
		got++
		byKind[e.Kind]++
	}
	c, err := CompareBPF(lw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run(sched.BPF) == nil || got != want || byKind[sim.Start] == 0 {
		t.Errorf("the shared trace saw %d events (%v), want the %d of the three replays run one by one", got, byKind, want)
	}
}
