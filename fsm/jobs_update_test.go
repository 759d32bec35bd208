package fsm

import (
	"strings"
	"testing"
	"time"
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
