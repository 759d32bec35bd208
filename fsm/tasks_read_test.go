package fsm

import (
	"fmt"
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
// are named: page by page, whatever the page size, it gives each job's
// placed tasks by index, with every attempt (all) or the latest, as the
// placements made them, and a job that does not exist is an error naming
// it.
func TestTasksOfListsJobsInTurn(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	for _, n := range []int64{3, 2, 4} {
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: n, Walltime: time.Hour, Command: []string{"x"}})
	}
	first := []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"},
		{JobID: 2, Task: 0, Node: "n1"}, {JobID: 3, Task: 0, Node: "n1"}, {JobID: 3, Task: 1, Node: "n1"}}
	// Every attempt on n1 is lost with it, and some tasks run again.
	again := []TaskPlacement{{JobID: 1, Task: 1, Node: "n2"}, {JobID: 3, Task: 0, Node: "n2"}, {JobID: 3, Task: 1, Node: "n2"}, {JobID: 3, Task: 2, Node: "n2"}}
	h.ok(&Assign{Placements: first})
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8}})
	h.ok(&NodeDown{ID: "n1"})
	h.ok(&Assign{Placements: again})

	// What the placements made: each task's attempts' nodes, in order.
	type task struct {
		job  uint64
		task int64
	}
	nodes := map[task][]string{}
	for _, p := range slices.Concat(first, again) {
		nodes[task{p.JobID, p.Task}] = append(nodes[task{p.JobID, p.Task}], p.Node)
	}
	jobs := []uint64{3, 1, 2}
	for _, all := range []bool{false, true} {
		var want []string
		for _, j := range jobs {
			for i := int64(0); i < 4; i++ {
				ns := nodes[task{j, i}]
				for k, n := range ns {
					if all || k == len(ns)-1 {
						want = append(want, fmt.Sprintf("%d_%d attempt %d on %s", j, i, k+1, n))
					}
				}
			}
		}
		for limit := 1; limit <= 7; limit++ {
			var got []string
			at := TasksCursor{}
			for pages := 0; at.Job < len(jobs); pages++ {
				if pages > 10 {
					t.Fatalf("all=%v limit %d: no end after %d pages (at %+v)", all, limit, pages, at)
				}
				list, next, err := h.f.TasksOf(jobs, at, limit, all)
				if err != nil {
					t.Fatalf("all=%v limit %d at %+v: %v", all, limit, at, err)
				}
				tasks := map[task]bool{}
				for _, a := range list {
					tasks[task{a.JobID, a.Task}] = true
					got = append(got, fmt.Sprintf("%d_%d attempt %d on %s", a.JobID, a.Task, a.Attempt, a.Node))
				}
				if len(tasks) > limit || len(list) == 0 {
					t.Fatalf("all=%v limit %d at %+v: a page of %d attempts of %d tasks", all, limit, at, len(list), len(tasks))
				}
				at = next
			}
			if !slices.Equal(got, want) {
				t.Fatalf("all=%v limit %d: paged\n%s\nwant\n%s", all, limit, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if _, _, err := h.f.TasksOf([]uint64{1, 9}, TasksCursor{}, 0, false); KindOf(err) != KindNotFound || !strings.Contains(err.Error(), "job 9") {
		t.Fatalf("an unknown job among them: err = %v, want NotFound naming job 9", err)
	}
}
