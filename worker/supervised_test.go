package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// One supervisor process runs all of an agent's attempts: starting this
// program for each attempt cost ten times a task's own start. Tasks at
// once and one after another all run under the same supervisor.
func TestOneSupervisorRunsEveryAttempt(t *testing.T) {
	ag := newTestAgent(t, nil)
	for task := range int64(6) {
		ag.assign(asg(1, task, 1, "echo $PPID", time.Minute, nil))
	}
	for task := range int64(6) {
		if code := waitEvent(t, ag, 1, task, 1, exited).GetExitCode(); code != 0 {
			t.Fatalf("task %d exited %d", task, code)
		}
	}
	ag.assign(asg(1, 6, 1, "echo $PPID", time.Minute, nil))
	waitEvent(t, ag, 1, 6, 1, exited)
	parents := map[string]bool{}
	for task := range int64(7) {
		b, err := os.ReadFile(outputPath(ag.cfg.WorkDir, attemptKey{1, task, 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT))
		if err != nil {
			t.Fatal(err)
		}
		parents[strings.TrimSpace(string(b))] = true
	}
	if len(parents) != 1 {
		t.Fatalf("7 attempts ran under %d parent processes %v; want one supervisor", len(parents), parents)
	}
	for pid := range parents {
		if pid == "" || pid == strconv.Itoa(os.Getpid()) {
			t.Fatalf("the tasks' parent is %q, not a supervisor (the agent is %d)", pid, os.Getpid())
		}
	}
}

// A supervisor that dies (killed) takes its running tasks with it; the
// agent reports them ended, and the next attempt runs under a new
// supervisor.
func TestAgentOutlivesItsSupervisor(t *testing.T) {
	ag := newTestAgent(t, nil)
	child := filepath.Join(t.TempDir(), "child")
	ag.assign(asg(1, 0, 1, "sleep 300 & echo $! > "+child+"; wait", time.Hour, nil))
	pid := waitPID(t, child)
	killSupervisor(t, ag)
	if code := waitEvent(t, ag, 1, 0, 1, exited).GetExitCode(); code != 128+int32(syscall.SIGKILL) {
		t.Errorf("the task of a killed supervisor exited %d, want %d", code, 128+syscall.SIGKILL)
	}
	waitGone(t, pid)
	ag.assign(asg(1, 1, 1, "exit 3", time.Minute, nil))
	if code := waitEvent(t, ag, 1, 1, 1, exited).GetExitCode(); code != 3 {
		t.Fatalf("the next attempt exited %d, want 3: it did not run under a new supervisor", code)
	}
}

// The supervisor (root, on a worker that runs tasks as their users)
// writes a task's output into the very files the agent created, not
// whatever is at their names when it opens them: a user who owns the
// output directory could otherwise put a link to a file of root's there
// and have the task's output written into it.
func TestTaskOutputCannotBeRedirected(t *testing.T) {
	ag := newTestAgent(t, nil)
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(name, name+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, name); err != nil {
		t.Fatal(err)
	}
	ag.lease.Store(monoNow() + int64(time.Hour))
	proc, err := ag.supervisors.start(supervisorSpec{Script: "echo written", Dir: dir, Walltime: time.Minute, KillGrace: time.Second}, out, out)
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := proc.wait(time.Now()); err != nil || ex.code != 0 {
		t.Fatalf("the task ended with %+v, %v", ex, err)
	}
	if b, _ := os.ReadFile(victim); len(b) != 0 {
		t.Errorf("the task's output went to the file linked at its name: %q", b)
	}
	if b, _ := os.ReadFile(name + ".moved"); string(b) != "written\n" {
		t.Errorf("the agent's output file holds %q, want the task's output", b)
	}
}

// A restarted worker waits for its predecessor's supervisor by the lock
// file that supervisor holds (waitOldSupervisors): held while any of its
// tasks may run, free once the supervisor is gone. One lock serves all of
// a supervisor's attempts; none is created per attempt.
func TestASupervisorHoldsOneLockForItsLife(t *testing.T) {
	ag := newTestAgent(t, nil)
	for task := range int64(3) {
		ag.assign(asg(1, task, 1, "sleep 300", time.Hour, nil))
	}
	for task := range int64(3) {
		waitEvent(t, ag, 1, task, 1, started)
	}
	locks, err := filepath.Glob(filepath.Join(ag.cfg.WorkDir, supervisorsDir, "*.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) != 1 {
		t.Fatalf("3 attempts running under one supervisor hold %d lock files %v; want the supervisor's one", len(locks), locks)
	}
	if free, err := lockFree(locks[0]); err != nil || free {
		t.Fatalf("the supervisor's lock %s is free (%v) while its tasks run", locks[0], err)
	}
	killSupervisor(t, ag)
	deadline := time.Now().Add(10 * time.Second)
	for {
		free, err := lockFree(locks[0])
		if err != nil {
			t.Fatal(err)
		}
		if free {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock %s is still held 10s after its supervisor was killed", locks[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killSupervisor kills the agent's current task supervisor (SIGKILL).
func killSupervisor(t *testing.T, ag *Agent) {
	t.Helper()
	ag.supervisors.mu.Lock()
	sup := ag.supervisors.cur
	ag.supervisors.mu.Unlock()
	if err := sup.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}
