package reproduce

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/sched"
)

func TestDFFExperimentMICJobsNoLongerWaitForCPU(t *testing.T) {
	// The DFF paper's claim (§4.2, Fig. 2–3): under H-DRF the MIC jobs
	// wait for CPU while MICs sit idle, under DFF they do not; the MIC
	// jobs finish sooner, the CPU jobs about as before, and the total
	// completion time falls (the paper: about −11.9%).
	// go test ./sim -run TestDFFExperiment -v prints the table.
	var cmps []*DFFComparison
	defer func() {
		var b strings.Builder
		if err := WriteDFFTable(&b, cmps); err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + b.String())
	}()
	for _, pooled := range []bool{false, true} {
		c, err := RunDFFExperiment(DFFOptions{PooledMICs: pooled}, dffSettings())
		if err != nil {
			t.Fatal(err)
		}
		cmps = append(cmps, c)
		t.Logf("pooled MICs %v: total completion H-DRF %v, DFF %v (%+.1f%%); MIC tasks while MIC jobs waited %.2f vs %.2f; MIC slots idle for CPU %.0f vs %.0f slot·s",
			pooled, c.HDRF.Total, c.DFF.Total, 100*c.TotalDelta, c.HDRF.MICTasks, c.DFF.MICTasks, c.HDRF.MICWaitingForCPU, c.DFF.MICWaitingForCPU)
		if c.HDRF.MICWaitingForCPU <= 0 {
			t.Errorf("pooled %v: under H-DRF no MIC ever waited for a CPU thread; the paper's starvation did not happen", pooled)
		}
		if c.DFF.MICWaitingForCPU != 0 {
			t.Errorf("pooled %v: under DFF MICs waited %.0f slot·s for CPU", pooled, c.DFF.MICWaitingForCPU)
		}
		if c.DFF.MICTasks <= c.HDRF.MICTasks {
			t.Errorf("pooled %v: MIC jobs ran %.2f tasks at a time under DFF, %.2f under H-DRF: DFF should give them more", pooled, c.DFF.MICTasks, c.HDRF.MICTasks)
		}
		if c.DFF.Total >= c.HDRF.Total {
			t.Errorf("pooled %v: total completion time %v under DFF, %v under H-DRF: DFF should be lower", pooled, c.DFF.Total, c.HDRF.Total)
		}
		for j := range 3 { // the CPU jobs barely change
			h, d := c.HDRF.Completion[j].Seconds(), c.DFF.Completion[j].Seconds()
			if d > h*1.05 || d < h*0.95 {
				t.Errorf("pooled %v: CPU job %d finished at %v under DFF, %v under H-DRF: more than 5%% apart", pooled, j+1, c.DFF.Completion[j], c.HDRF.Completion[j])
			}
		}
		if pooled {
			for j := 3; j < 5; j++ {
				if h, d := c.HDRF.Completion[j].Seconds(), c.DFF.Completion[j].Seconds(); d > 0.95*h {
					t.Errorf("MIC job %d finished at %v under DFF, %v under H-DRF: want at least 5%% sooner", j+1, c.DFF.Completion[j], c.HDRF.Completion[j])
				}
			}
		}
	}
}

func TestDFFTableShowsTheTree(t *testing.T) {
	c, err := RunDFFExperiment(DFFOptions{}, dffSettings())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteDFFTable(&b, []*DFFComparison{c}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n3", "job4", "FR <cpu 42, mem 119, mic 10.5>", "H-DRF", "total", "11.9%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func dffSettings() sched.Settings {
	s := sched.DefaultSettings()
	s.Quantum = time.Minute
	return s
}
