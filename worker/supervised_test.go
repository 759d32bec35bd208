package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A renewal that reaches a supervisor after its task has ended is not an
// error: the attempt is over and needs no lease. The agent renews every
// new supervisor once it has started, and a short task (`true`) is often
// over by then; each such renewal used to log "cannot renew a task's
// lease: write |1: broken pipe" (3,314 warnings in one run of
// BenchmarkTaskStartsThroughTheWholePath).
func TestRenewingAnEndedSupervisorIsNotAnError(t *testing.T) {
	ag := newTestAgent(t, nil)
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	lease := func() int64 { return monoNow() + int64(time.Hour) }
	started := time.Now()
	proc, err := startSupervised(ag.exe, supervisorSpec{Script: "exit 0", Dir: dir, Walltime: time.Minute, KillGrace: time.Second}, lease, out, out)
	if err != nil {
		t.Fatal(err)
	}
	// The renewal that races with a short task: its supervisor has exited
	// (a zombie not yet reaped), so the pipe has no reader (EPIPE).
	pid := proc.cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skipf("cannot see the supervisor's state in /proc: %v", err)
		}
		if fields := strings.Fields(string(stat)); len(fields) > 2 && fields[2] == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the supervisor of a task running `exit 0` did not exit")
		}
	}
	if err := proc.renew(lease()); err != nil {
		t.Errorf("renewing the lease of a supervisor that has exited: %v", err)
	}
	// And once the agent has reaped it.
	ex, err := proc.wait(started)
	if err != nil || ex.code != 0 || ex.fenced != "" {
		t.Fatalf("the task ended with %+v, %v; want exit 0", ex, err)
	}
	if err := proc.renew(lease()); err != nil {
		t.Errorf("renewing the lease of a supervisor that was reaped: %v", err)
	}
}
