package fsm

import (
	"testing"
	"time"
)

func TestSmokeJobLifecycle(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	job := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 3, Walltime: time.Hour, Command: []string{"sleep", "1"}}).(JobInfo)
	if job.ID != 1 || job.Hold != 6_000_000 {
		t.Fatalf("job = %+v", job)
	}
	v := h.f.View(h.now)
	t.Logf("view: %+v", v)
	h.at(time.Minute)
	res := h.ok(&Assign{Placements: []TaskPlacement{{1, 0, "n1"}, {1, 1, "n1"}, {1, 2, "n1"}}}).(*AssignResult)
	t.Logf("assign: %+v", res)
	h.at(31 * time.Minute)
	ev := h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, Runtime: 30 * time.Minute}}}).(*EventsResult)
	t.Logf("events: %+v", ev)
	ev = h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, Runtime: 30 * time.Minute}}}).(*EventsResult)
	t.Logf("events: %+v", ev)
	h.ok(&NodeDown{ID: "n1"})
	j, _ := h.f.Job(1)
	t.Logf("job: %+v", j)
	b, _ := h.f.Balance("phys", h.now)
	t.Logf("balance: %+v", b)
	rep, err := h.f.Verify()
	t.Logf("verify: %+v %v", rep, err)
	fr, _ := h.f.Fairness("", h.now)
	t.Logf("fair: %+v", fr)
}
