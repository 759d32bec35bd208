package fsm

import (
	"math"
	"testing"
	"time"
)

// Measured usage is kept on the attempt, an OOM kill gets its reason
// worded with the memory request, and the charge is the allocation's,
// the same as without any measurement.
func TestMeasuredUsageIsKeptAndChargesStayOnTheAllocation(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4, "mem": 64 << 20}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(30 * time.Minute)
	oom := exited(1, 0, 1, 137, 30*time.Minute)
	oom.CPUSeconds, oom.PeakMemBytes, oom.OOMKilled = 12.5, 64<<20, true
	plain := exited(1, 1, 1, 0, 30*time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{oom, plain}})
	tasks, _, err := h.f.Tasks(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := tasks[0]
	if got.CPUSeconds != 12.5 || got.PeakMemBytes != 64<<20 || got.Reason != "exceeded its memory request of 64M" || got.State != TaskFailed {
		t.Errorf("the OOM-killed attempt reads %+v", got)
	}
	if tasks[1].CPUSeconds != 0 || tasks[1].Reason != "" {
		t.Errorf("an attempt without measurement reads %+v", tasks[1])
	}
	if tasks[0].Charged != tasks[1].Charged || tasks[0].Charged == 0 {
		t.Errorf("charged %v with measurement, %v without: the charge is the allocation's", tasks[0].Charged, tasks[1].Charged)
	}
}

// A measurement that cannot be is refused with the event.
func TestImpossibleUsageIsRefused(t *testing.T) {
	for _, e := range []TaskEvent{
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, CPUSeconds: math.NaN()},
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, CPUSeconds: -1},
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, PeakMemBytes: -1},
	} {
		if err := (&TaskEvents{Events: []TaskEvent{e}}).validate(rules{}); err == nil {
			t.Errorf("event %+v was accepted", e)
		}
	}
}
