package fsm

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Attempt reads any attempt of a task, not only the latest.
func TestAttemptReadsEveryAttempt(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 1}})
	h.ok(&NodeDown{ID: "n1"})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n2"}}})
	first, err := h.f.Attempt(1, 0, 1)
	if err != nil || first.Node != "n1" || first.State != TaskLostState {
		t.Fatalf("attempt 1 = %+v, %v; want lost on n1", first, err)
	}
	second, err := h.f.Attempt(1, 0, 2)
	if err != nil || second.Node != "n2" || second.State != TaskAssigned {
		t.Fatalf("attempt 2 = %+v, %v; want assigned on n2", second, err)
	}
	if _, err := h.f.Attempt(1, 0, 3); KindOf(err) != KindNotFound {
		t.Fatalf("attempt 3: err = %v, want NotFound", err)
	}
}

// TasksOf lists several jobs' tasks as one listing, in the order the jobs
// are named: page by page, whatever the page size, it gives what Tasks
// (or, with all, Attempts) gives for each job in turn, and a job that
// does not exist is an error naming it.
func TestTasksOfListsJobsInTurn(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	for _, n := range []int64{3, 2, 4} {
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: n, Walltime: time.Hour, Command: []string{"x"}})
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"},
		{JobID: 2, Task: 0, Node: "n1"}, {JobID: 3, Task: 0, Node: "n1"}, {JobID: 3, Task: 1, Node: "n1"}}})
	// Every attempt on n1 is lost with it, and some tasks run again.
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8}})
	h.ok(&NodeDown{ID: "n1"})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 1, Node: "n2"}, {JobID: 3, Task: 0, Node: "n2"}, {JobID: 3, Task: 1, Node: "n2"}, {JobID: 3, Task: 2, Node: "n2"}}})

	jobs := []uint64{3, 1, 2}
	for _, all := range []bool{false, true} {
		var want []TaskInfo
		for _, j := range jobs {
			list, next, err := h.f.Tasks(j, 0, 0)
			if all {
				list, next, err = h.f.Attempts(j, 0, 0)
			}
			if err != nil || next != 0 {
				t.Fatalf("job %d alone: next %d, %v", j, next, err)
			}
			want = append(want, list...)
		}
		// The listing must cross jobs and, with all, hold tasks' earlier
		// attempts beside their latest.
		tasks := map[[2]uint64]bool{}
		for _, a := range want {
			tasks[[2]uint64{a.JobID, uint64(a.Task)}] = true
		}
		if len(tasks) < 6 || all != (len(want) > len(tasks)) {
			t.Fatalf("all=%v: the jobs alone list %d attempts of %d tasks: %+v", all, len(want), len(tasks), want)
		}
		for limit := 1; limit <= 7; limit++ {
			var got []TaskInfo
			at := TasksCursor{}
			for pages := 0; at.Job < len(jobs); pages++ {
				if pages > 10 {
					t.Fatalf("all=%v limit %d: no end after %d pages (at %+v)", all, limit, pages, at)
				}
				list, next, err := h.f.TasksOf(jobs, at, limit, all)
				if err != nil {
					t.Fatalf("all=%v limit %d at %+v: %v", all, limit, at, err)
				}
				tasks := map[[2]uint64]bool{}
				for _, a := range list {
					tasks[[2]uint64{a.JobID, uint64(a.Task)}] = true
				}
				if len(tasks) > limit || len(list) == 0 {
					t.Fatalf("all=%v limit %d at %+v: a page of %d attempts of %d tasks", all, limit, at, len(list), len(tasks))
				}
				got = append(got, list...)
				at = next
			}
			if !slices.EqualFunc(got, want, func(a, b TaskInfo) bool {
				return a.JobID == b.JobID && a.Task == b.Task && a.Attempt == b.Attempt && a.Node == b.Node
			}) {
				t.Fatalf("all=%v limit %d: paged\n%+v\nwant\n%+v", all, limit, got, want)
			}
		}
	}
	if _, _, err := h.f.TasksOf([]uint64{1, 9}, TasksCursor{}, 0, false); KindOf(err) != KindNotFound || !strings.Contains(err.Error(), "job 9") {
		t.Fatalf("an unknown job among them: err = %v, want NotFound naming job 9", err)
	}
}
