package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// newTestAgent returns an agent that is not connected to anything: the
// tests hand it assignments and read the events it would report.
func newTestAgent(t testing.TB, tune func(*Config)) *Agent {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NodeID = "n1"
	cfg.Join = []string{"127.0.0.1:1"}
	cfg.WorkDir = t.TempDir()
	cfg.KillGrace = 300 * time.Millisecond
	cfg.Resources = map[string]float64{"cpu": 4, "mem": 1 << 30}
	// Confinement has its own tests (cgroup_test.go), which need root.
	cfg.Unconfined = true
	if tune != nil {
		tune(&cfg)
	}
	ag, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ag.runCtx, ag.cancelRun = ctx, cancel
	// As if the leader had just answered: no test here is about fencing
	// unless it says so.
	ag.renewLease(monoNow()+int64(time.Hour), defaultHeartbeat)
	t.Cleanup(func() {
		for _, a := range ag.tasks.running() {
			ag.kill([]*longfairv1.AttemptRef{a.key.ref()}, false, "test over")
		}
		ag.wg.Wait()
		cancel()
	})
	return ag
}

func asg(job uint64, task int64, attempt int32, script string, walltime time.Duration, demand map[string]float64) *longfairv1.Assignment {
	return &longfairv1.Assignment{
		Attempt: &longfairv1.AttemptRef{JobId: job, Task: task, Attempt: attempt},
		Account: "physics", User: "ann", Command: []string{script},
		Walltime: durationpb.New(walltime), Demand: demand,
	}
}

// waitEvent waits for the agent to report an event of kind about attempt
// (job, task, attempt) and returns it.
func waitEvent(t *testing.T, ag *Agent, job uint64, task int64, attempt int32, kind longfairv1.TaskEventKind) *longfairv1.TaskEvent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range ag.tasks.eventsAfter(0) {
			r := e.GetAttempt()
			if r.GetJobId() == job && r.GetTask() == task && r.GetAttempt() == attempt && e.GetKind() == kind {
				return e
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %v event for attempt %d of task %d of job %d", kind, attempt, task, job)
	return nil
}

const (
	started = longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED
	exited  = longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED
)

func readOutput(t *testing.T, ag *Agent, k attemptKey, s longfairv1.OutputStream) string {
	t.Helper()
	b, err := os.ReadFile(outputPath(ag.cfg.WorkDir, k, s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A task runs under /bin/sh with its variables, in its own directory,
// with stdout and stderr in its files; its exit code and runtime are
// reported, and the directory goes when it is left empty.
func TestTaskEnvironmentDirectoryAndOutput(t *testing.T) {
	t.Setenv(EnvJobID, "inherited-must-not-leak")
	ag := newTestAgent(t, nil)
	script := `echo "job=$LONGFAIR_JOB_ID id=$LONGFAIR_TASK_ID index=$LONGFAIR_TASK_INDEX attempt=$LONGFAIR_ATTEMPT account=$LONGFAIR_ACCOUNT user=$LONGFAIR_USER node=$LONGFAIR_NODE_ID mic=${OFFLOAD_DEVICES-unset}"; pwd; echo oops >&2; sleep 0.1; exit 3`
	ag.assign(asg(7, 4, 2, script, time.Minute, map[string]float64{"cpu": 1}))
	waitEvent(t, ag, 7, 4, 2, started)
	e := waitEvent(t, ag, 7, 4, 2, exited)
	if e.GetExitCode() != 3 {
		t.Fatalf("exit code %d, want 3", e.GetExitCode())
	}
	if rt := e.GetRuntime().AsDuration(); rt < 100*time.Millisecond || rt > 5*time.Second {
		t.Fatalf("runtime %v, want the 0.1s the task slept and a little more", rt)
	}
	k := attemptKey{7, 4, 2}
	out := strings.Split(strings.TrimSpace(readOutput(t, ag, k, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT)), "\n")
	if want := "job=7 id=7.4 index=4 attempt=2 account=physics user=ann node=n1 mic=unset"; out[0] != want {
		t.Fatalf("environment line %q, want %q", out[0], want)
	}
	dir := taskDir(ag.cfg.WorkDir, k)
	if real, _ := filepath.EvalSymlinks(dir); out[1] != dir && out[1] != real {
		t.Fatalf("ran in %q, want %q", out[1], dir)
	}
	if got := readOutput(t, ag, k, longfairv1.OutputStream_OUTPUT_STREAM_STDERR); got != "oops\n" {
		t.Fatalf("stderr %q", got)
	}
	// It goes once run returns, just after the end is reported.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, err := os.Stat(dir)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the empty working directory is still there 5s after the task's end: %v", err)
		}
	}
}

// A delivery of an attempt the agent already holds starts nothing.
func TestDuplicateAssignmentRunsOnce(t *testing.T) {
	ag := newTestAgent(t, nil)
	runs := filepath.Join(t.TempDir(), "runs")
	a := asg(1, 0, 1, "echo x >> "+runs, time.Minute, nil)
	ag.assign(a)
	ag.assign(a)
	waitEvent(t, ag, 1, 0, 1, exited)
	ag.assign(a) // still held: its exit is not acknowledged yet
	time.Sleep(100 * time.Millisecond)
	if b, _ := os.ReadFile(runs); string(b) != "x\n" {
		t.Fatalf("the task ran %d times", strings.Count(string(b), "x"))
	}
	// Acknowledged, the attempt is forgotten.
	held, pending, last := ag.tasks.snapshot()
	if len(held) != 1 || held[0].GetRunning() || len(pending) != 2 {
		t.Fatalf("before the ack: held %v, pending %v", held, pending)
	}
	ag.tasks.ack(last)
	if held, pending, _ := ag.tasks.snapshot(); len(held) != 0 || len(pending) != 0 {
		t.Fatalf("after the ack: held %v, pending %v", held, pending)
	}
}

// pidAlive reports whether a process exists (a zombie counts as gone).
func pidAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b))
	return len(fields) < 3 || fields[2] != "Z"
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the task did not write %s", path)
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for pidAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived its task", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Walltime: SIGTERM first; a task that ignores it is killed after the
// grace period, children included.
func TestWalltimeTermThenKill(t *testing.T) {
	ag := newTestAgent(t, nil)
	dir := t.TempDir()
	ag.assign(asg(1, 0, 1, "sleep 30", 200*time.Millisecond, nil))
	if code := waitEvent(t, ag, 1, 0, 1, exited).GetExitCode(); code != 128+15 {
		t.Fatalf("a task that honours SIGTERM exited %d, want 143", code)
	}
	child := filepath.Join(dir, "child")
	ag.assign(asg(1, 1, 1, fmt.Sprintf(`trap "" TERM; sh -c 'trap "" TERM; sleep 30' & echo $! > %s; wait; wait`, child), 200*time.Millisecond, nil))
	pid := waitPID(t, child)
	e := waitEvent(t, ag, 1, 1, 1, exited)
	if e.GetExitCode() != 128+9 {
		t.Fatalf("a task that ignores SIGTERM exited %d, want 137", e.GetExitCode())
	}
	if rt := e.GetRuntime().AsDuration(); rt < 500*time.Millisecond || rt > 5*time.Second {
		t.Fatalf("runtime %v, want walltime + grace (0.5s) and a little", rt)
	}
	waitGone(t, pid)
}

// Processes a task leaves behind in its group are killed when it exits.
func TestLeftoverProcessesAreKilled(t *testing.T) {
	ag := newTestAgent(t, nil)
	child := filepath.Join(t.TempDir(), "child")
	ag.assign(asg(1, 0, 1, fmt.Sprintf(`sleep 30 & echo $! > %s; exit 0`, child), time.Minute, nil))
	if code := waitEvent(t, ag, 1, 0, 1, exited).GetExitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	waitGone(t, waitPID(t, child))
}

// A cancelled job's attempt is stopped and its exit reported; an attempt
// the ledger does not know is killed at once and not reported.
func TestKillWithAndWithoutReport(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.KillGrace = 10 * time.Second })
	dir := t.TempDir()
	for i, p := range []string{"a", "b"} {
		ag.assign(asg(1, int64(i), 1, fmt.Sprintf(`sleep 30 & echo $! > %s; wait`, filepath.Join(dir, p)), time.Minute, nil))
	}
	pidA, pidB := waitPID(t, filepath.Join(dir, "a")), waitPID(t, filepath.Join(dir, "b"))
	ag.kill([]*longfairv1.AttemptRef{{JobId: 1, Task: 0, Attempt: 1}}, true, "cancelled")
	if code := waitEvent(t, ag, 1, 0, 1, exited).GetExitCode(); code != 128+15 {
		t.Fatalf("cancelled task exited %d, want 143", code)
	}
	waitGone(t, pidA)

	start := time.Now()
	ag.kill([]*longfairv1.AttemptRef{{JobId: 1, Task: 1, Attempt: 1}}, false, "unknown to the ledger")
	waitGone(t, pidB)
	if time.Since(start) > 5*time.Second {
		t.Fatal("an unknown attempt waited for the grace period")
	}
	deadline := time.Now().Add(5 * time.Second)
	for ag.Running() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, e := range ag.tasks.eventsAfter(0) {
		if e.GetAttempt().GetTask() == 1 && e.GetKind() == exited {
			t.Fatalf("the end of an attempt the ledger does not know was reported: %v", e)
		}
	}
	held, _, _ := ag.tasks.snapshot()
	for _, h := range held {
		if h.GetAttempt().GetTask() == 1 {
			t.Fatalf("the unknown attempt is still held: %v", h)
		}
	}
}

// MIC devices: attempts that run at the same time get distinct devices,
// and one that needs a device in use waits for it.
func TestMICDevicesAreDistinct(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.Resources["mic"] = 2 })
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	script := fmt.Sprintf(`echo "$OFFLOAD_DEVICES" > %s/$LONGFAIR_TASK_INDEX; while [ ! -e %s ]; do sleep 0.01; done`, dir, gate)
	for i := range 3 {
		ag.assign(asg(1, int64(i), 1, script, time.Minute, map[string]float64{"mic": 1, "cpu": 1}))
	}
	// Which two get the devices first is up to the scheduler of goroutines.
	startedTasks := func() map[int64]bool {
		m := map[int64]bool{}
		for _, e := range ag.tasks.eventsAfter(0) {
			if e.GetKind() == started {
				m[e.GetAttempt().GetTask()] = true
			}
		}
		return m
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(startedTasks()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	first := startedTasks()
	if len(first) != 2 {
		t.Fatalf("tasks %v started on a node with two MIC devices, want two of the three", first)
	}
	var devs []string
	waiting := int64(-1)
	for i := range int64(3) {
		if !first[i] {
			waiting = i
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, strconv.FormatInt(i, 10)))
		devs = append(devs, strings.TrimSpace(string(b)))
	}
	if d := strings.Join(devs, ","); d != "0,1" && d != "1,0" {
		t.Fatalf("devices %q, want 0 and 1", d)
	}
	os.WriteFile(gate, nil, 0o600)
	waitEvent(t, ag, 1, waiting, 1, exited)
	if c, _ := os.ReadFile(filepath.Join(dir, strconv.FormatInt(waiting, 10))); strings.TrimSpace(string(c)) != "0" && strings.TrimSpace(string(c)) != "1" {
		t.Fatalf("the waiting task's devices %q", c)
	}
	// Two devices at once.
	ag.assign(asg(2, 0, 1, fmt.Sprintf(`echo "$OFFLOAD_DEVICES" > %s/both`, dir), time.Minute, map[string]float64{"mic": 2}))
	waitEvent(t, ag, 2, 0, 1, exited)
	if both, _ := os.ReadFile(filepath.Join(dir, "both")); strings.TrimSpace(string(both)) != "0,1" {
		t.Fatalf("a two-device task got %q", both)
	}
}

// An attempt killed while it waits for its devices never starts and is
// reported ended after no time.
func TestKillBeforeStart(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.Resources["mic"] = 1 })
	ag.assign(asg(1, 0, 1, "sleep 30", time.Minute, map[string]float64{"mic": 1}))
	waitEvent(t, ag, 1, 0, 1, started)
	ag.assign(asg(1, 1, 1, "echo should-not-run", time.Minute, map[string]float64{"mic": 1}))
	time.Sleep(50 * time.Millisecond)
	ag.kill([]*longfairv1.AttemptRef{{JobId: 1, Task: 1, Attempt: 1}}, true, "cancelled")
	e := waitEvent(t, ag, 1, 1, 1, exited)
	if e.GetRuntime().AsDuration() != 0 || e.GetExitCode() != 128+15 {
		t.Fatalf("event %v, want exit 143 after no time", e)
	}
	for _, ev := range ag.tasks.eventsAfter(0) {
		if ev.GetAttempt().GetTask() == 1 && ev.GetKind() == started {
			t.Fatal("the killed attempt was reported started")
		}
	}
}
