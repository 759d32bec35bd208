package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// A task runs while the agent's lease is renewed; once the agent stops
// renewing it (it lost the leader, or is stopped and cannot), the task's
// supervisor kills the whole process group on its own and the agent
// reports the attempt lost with the runtime it really had.
func TestLeaseExpiryFencesTheTask(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.FenceTimeout = time.Second; c.KillGrace = 200 * time.Millisecond })
	ag.lease.Store(monoNow() + int64(time.Second)) // as if last heard just now
	child := filepath.Join(t.TempDir(), "child")
	ag.assign(asg(1, 0, 1, fmt.Sprintf(`sleep 300 & echo $! > %s; wait`, child), time.Hour, nil))
	pid := waitPID(t, child)

	// Renewed for 2 s: still running when the first lease would have
	// run out twice over.
	begin := time.Now()
	for time.Since(begin) < 2*time.Second {
		ag.renewLease(monoNow(), defaultHeartbeat)
		time.Sleep(100 * time.Millisecond)
	}
	if !ag.tasks.holds(attemptKey{1, 0, 1}) || len(ag.tasks.running()) != 1 {
		t.Fatal("the task ended while its lease was being renewed")
	}
	stopped := time.Now()
	e := waitEvent(t, ag, 1, 0, 1, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST)
	fencedAfter := time.Since(stopped)
	waitGone(t, pid)
	if fencedAfter < 800*time.Millisecond || fencedAfter > 3*time.Second {
		t.Errorf("fenced %v after the last renewal, want about the 1s fence timeout", fencedAfter)
	}
	if rt := e.GetRuntime().AsDuration(); rt < 2*time.Second || rt > 2*time.Second+fencedAfter+time.Second {
		t.Errorf("the fenced attempt reported a runtime of %v; it ran %v", rt, 2*time.Second+fencedAfter)
	}
	for _, ev := range ag.tasks.eventsAfter(0) {
		if ev.GetKind() == exited {
			t.Errorf("a fenced attempt was reported as exited: %v", ev)
		}
	}
}

// An attempt assigned while the lease has run out is fenced at once.
func TestExpiredLeaseFencesANewTask(t *testing.T) {
	ag := newTestAgent(t, nil)
	ag.lease.Store(monoNow() - 1) // no contact for longer than the fence timeout
	ag.assign(asg(1, 0, 1, "sleep 300", time.Hour, nil))
	if rt := waitEvent(t, ag, 1, 0, 1, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST).GetRuntime().AsDuration(); rt > 2*time.Second {
		t.Errorf("a task started without a lease ran %v", rt)
	}
}

// The supervisor leaves the task's signals as a task started by the agent
// itself had them: SIGHUP and SIGINT, which the supervisor does not act
// on, still end the task.
func TestTaskSignalsAreNotIgnored(t *testing.T) {
	ag := newTestAgent(t, nil)
	ag.assign(asg(1, 0, 1, "kill -HUP $$; echo survived", time.Minute, nil))
	ag.assign(asg(1, 1, 1, "kill -INT $$; echo survived", time.Minute, nil))
	for task, sig := range map[int64]int32{0: 1, 1: 2} {
		if code := waitEvent(t, ag, 1, task, 1, exited).GetExitCode(); code != 128+sig {
			t.Errorf("a task that sent itself signal %d exited %d, want %d", sig, code, 128+sig)
		}
	}
}

// A queued attempt whose slot frees after the lease has run out does not
// start: the leader may already run it elsewhere. It is reported lost
// after no time, and nothing of it ran.
func TestQueuedTaskDoesNotStartWithoutALease(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.FenceTimeout = time.Second; c.KillGrace = 100 * time.Millisecond })
	ag.lease.Store(monoNow() + int64(300*time.Millisecond)) // contact lost 700 ms ago
	marker := filepath.Join(t.TempDir(), "ran")
	ag.assign(asg(1, 0, 1, "sleep 300", time.Hour, map[string]float64{"cpu": 4}))
	queued := asg(2, 0, 1, "touch "+marker, time.Hour, map[string]float64{"cpu": 4})
	queued.Queued = true
	ag.assign(queued)
	// The running task is fenced when the lease runs out, which frees
	// its slot for the queued one.
	waitEvent(t, ag, 1, 0, 1, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST)
	e := waitEvent(t, ag, 2, 0, 1, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST)
	if rt := e.GetRuntime().AsDuration(); rt != 0 {
		t.Errorf("the queued attempt reported a runtime of %v; it never started", rt)
	}
	for _, ev := range ag.tasks.eventsAfter(0) {
		if ev.GetAttempt().GetJobId() == 2 && ev.GetKind() == longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED {
			t.Error("the queued attempt was reported started after the lease ran out")
		}
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the queued task ran after the lease ran out")
	}
}
