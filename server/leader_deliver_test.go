package server

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// A worker starts a queued attempt in whatever room it sees, so attempts
// sent again (a sweep, a reconnect) go to it with every attempt placed on
// its free resources first, then the queued ones in the order they were
// queued, whatever their ids.
func TestDeliveryOrderSendsQueuedAttemptsLast(t *testing.T) {
	tasks := []fsm.TaskInfo{
		{JobID: 1, Task: 0, Attempt: 1, State: fsm.TaskQueued, AssignedAt: 20},
		{JobID: 1, Task: 1, Attempt: 1, State: fsm.TaskQueued, AssignedAt: 10},
		{JobID: 2, Task: 0, Attempt: 1, State: fsm.TaskRunning, AssignedAt: 5},
		{JobID: 3, Task: 0, Attempt: 1, State: fsm.TaskAssigned, AssignedAt: 30},
	}
	slices.SortFunc(tasks, deliveryOrder)
	var got []attemptKey
	for _, ti := range tasks {
		got = append(got, keyOfTask(ti))
	}
	want := []attemptKey{{2, 0, 1}, {3, 0, 1}, {1, 1, 1}, {1, 0, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered in the order %v, want %v", got, want)
	}
}

// A start's runtime (how long its worker held it back) reaches the ledger,
// which dates the start by it; so does an end's.
func TestTaskEventsKeepTheirRuntime(t *testing.T) {
	ref := &longfairv1.AttemptRef{JobId: 3, Task: 1, Attempt: 1}
	for _, kind := range []longfairv1.TaskEventKind{longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED} {
		ev, err := taskEventFromProto(&longfairv1.TaskEvent{Attempt: ref, Kind: kind, Runtime: durationpb.New(40 * time.Millisecond)})
		if err != nil || ev.Runtime != 40*time.Millisecond {
			t.Errorf("%v event: runtime %v, %v; want 40ms", kind, ev.Runtime, err)
		}
	}
}
