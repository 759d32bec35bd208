package fsm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

func ptr[T any](v T) *T { return &v }

// A job's name, walltime (lower only), throttle, nice and dependency
// change while it has not ended; a dependency that would close a cycle
// is refused, and nothing changes.
func TestUpdateJob(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 2))
	h.ok(depJob("b", "afterok:1", 1))
	info := h.ok(&UpdateJob{JobID: 1, Name: ptr("renamed"), Walltime: ptr(30 * time.Minute), Throttle: ptr(1), Nice: ptr(5)}).(JobInfo)
	if info.Name != "renamed" || info.Walltime != 30*time.Minute || info.Throttle != 1 || info.Nice != 5 {
		t.Fatalf("updated job: %+v", info)
	}
	if offeredTasks(h, 1) != 1 {
		t.Fatal("the updated throttle of 1 does not hold")
	}
	for _, c := range []struct {
		cmd  *UpdateJob
		want string
	}{
		{&UpdateJob{JobID: 1, Walltime: ptr(2 * time.Hour)}, "can only be lowered"},
		{&UpdateJob{JobID: 1, Dependency: ptr("afterok:2")}, "cycle (job 1 waits for job 2 waits for job 1)"},
		{&UpdateJob{JobID: 1, Dependency: ptr("afterok:9")}, "does not exist"},
	} {
		if err := h.apply(c.cmd).Err; err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want a refusal saying %q", c.cmd, err, c.want)
		}
	}
	if _, err := Encode(h.now, &UpdateJob{JobID: 1}); err == nil {
		t.Error("an update of nothing was accepted")
	}
	// Job 2 no longer waits for job 1 once its dependency is cleared.
	if queued(h, 2) {
		t.Fatal("job 2 is offered while it waits for job 1")
	}
	h.ok(&UpdateJob{JobID: 2, Dependency: ptr("")})
	if !queued(h, 2) {
		t.Fatal("job 2 is not offered once its dependency was cleared")
	}
	run(h, 2, 0, 0)
	if err := h.apply(&UpdateJob{JobID: 2, Name: ptr("late")}).Err; err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("updating an ended job: %v", err)
	}
}

// A lowered walltime binds the tasks placed after it; a task already
// placed was sent the old one, runs to it, and is charged and foreseen by
// backfill for what it occupies, as Slurm's scontrol update promises. A
// version-3 entry, logged before this rule, replays as it applied then.
func TestLowerWalltimeKeepsThePlacedTasksLimit(t *testing.T) {
	for _, c := range []struct {
		name    string
		version uint8
		keeps   bool
	}{{"current", CommandVersion, true}, {"version 3", 3, false}} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.setup(1000)
			job := &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 3, Walltime: 4 * time.Hour, Command: []string{"x"}}
			h.ok(job)
			h.ok(job) // job 2, never updated: what an attempt of the same runtime costs
			h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1"}}})
			h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, {JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}}})

			h.at(10 * time.Minute)
			body := `{"job_id":1,"walltime":3600000000000}` // one hour
			if r := h.f.Apply(h.log.addRaw(rawEntry(c.version, TypeUpdateJob, h.now, body))).(*Result); r.Err != nil {
				t.Fatalf("update: %v", r.Err)
			}
			// Task 1 starts after the update, with the walltime it was sent.
			h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 1, Attempt: 1, Kind: TaskStarted}}})
			placed := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}}).(*AssignResult).Accepted
			h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 2, Attempt: 1, Kind: TaskStarted}}})

			limit := time.Hour
			if c.keeps {
				limit = 4 * time.Hour
			}
			// What the leader sends each attempt's worker.
			if len(placed) != 1 || placed[0].Limit != time.Hour {
				t.Errorf("task 2, placed after the update, is sent %+v; want a limit of 1h", placed)
			}
			for _, ti := range h.f.Running("n1") {
				want := map[uint64]time.Duration{1: limit, 2: 4 * time.Hour}[ti.JobID]
				if ti.JobID == 1 && ti.Task == 2 {
					want = time.Hour
				}
				if ti.Limit != want {
					t.Errorf("task %d.%d would be sent again with a limit of %v, want %v", ti.JobID, ti.Task, ti.Limit, want)
				}
			}
			// Backfill foresees each task's end at its start plus its limit.
			v := h.f.View(h.now)
			var ends []ledger.Time
			for _, r := range v.Nodes[0].Releases {
				ends = append(ends, r.At)
			}
			want := []ledger.Time{t0.Add(limit), h.now.Add(limit), h.now.Add(time.Hour), t0.Add(4 * time.Hour)}
			if !slices.Equal(ends, want) {
				t.Errorf("backfill foresees ends at %v, want %v (tasks 1.0, 1.1, 1.2 and 2.0)", ends, want)
			}

			// A restart keeps each attempt's limit.
			if err := h.f.Close(); err != nil {
				t.Fatal(err)
			}
			h.f = openFSM(t, h.dir)

			h.at(3*time.Hour + 10*time.Minute)
			h.ok(&TaskEvents{Events: []TaskEvent{
				exited(1, 0, 1, 0, 3*time.Hour), exited(2, 0, 1, 0, 3*time.Hour),
				exited(1, 1, 1, 0, 3*time.Hour), exited(1, 2, 1, 0, 3*time.Hour),
			}})
			tasks, _, err := h.f.Tasks(1, 0, 3)
			if err != nil {
				t.Fatal(err)
			}
			same, _, err := h.f.Tasks(2, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []time.Duration{min(3*time.Hour, limit), min(3*time.Hour, limit), time.Hour} {
				if got := tasks[i].Runtime; got != want {
					t.Errorf("task %d ran 3h and is charged for %v, want %v", i, got, want)
				}
			}
			if c.keeps && tasks[0].Charged != same[0].Charged {
				t.Errorf("a task placed before the walltime was lowered was charged %v; an attempt of the same runtime costs %v", tasks[0].Charged, same[0].Charged)
			}
		})
	}
}

// A requeue's hold covers what its stopped tasks may be charged: each up
// to its own limit, kept when its job's walltime was lowered after it was
// placed. Priced on the lowered walltime, it ran out, and the second
// task's charge was posted as 0 while it ran 3 hours.
func TestRequeueHoldCoversThePlacedTasksLimit(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	job := &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 2, Walltime: 4 * time.Hour, Command: []string{"x"}}
	h.ok(job)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 1, Walltime: 4 * time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1"}}})
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, {JobID: 1, Task: 1, Attempt: 1, Kind: TaskStarted}, {JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	h.at(10 * time.Minute)
	h.ok(&UpdateJob{JobID: 1, Walltime: ptr(time.Hour)})
	h.at(3*time.Hour + 10*time.Minute)
	h.ok(&RequeueJob{JobID: 1})
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 143, 3*time.Hour), exited(1, 1, 1, 143, 3*time.Hour), exited(2, 0, 1, 0, 3*time.Hour)}})
	requeued, _, err := h.f.Attempts(1, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := h.f.Tasks(2, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range requeued {
		if ti.Attempt == 1 && ti.Charged != same[0].Charged {
			t.Errorf("requeued task %d ran 3h and was charged %v; an attempt of the same runtime costs %v", ti.Task, ti.Charged, same[0].Charged)
		}
	}
}
