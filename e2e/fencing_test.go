package e2e

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

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// tickScript is shell text that appends "ATTEMPT NODE UNIXNANOS" to path
// every 50 ms, n times: a run whose every moment is on record.
func tickScript(path string, n int) string {
	return fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "$LONGFAIR_ATTEMPT $LONGFAIR_NODE_ID $(date +%%s%%N)" >> %s; sleep 0.05; i=$((i+1)); done`, n, path)
}

// ticks reads a tickScript's file: each attempt's first and last tick.
func ticks(t testing.TB, path string) map[int][2]time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[int][2]time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // a line cut short by the kill
		}
		a, err1 := strconv.Atoi(f[0])
		ns, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		at := time.Unix(0, ns)
		r, ok := out[a]
		if !ok || at.Before(r[0]) {
			r[0] = at
		}
		if at.After(r[1]) {
			r[1] = at
		}
		out[a] = r
	}
	return out
}

// A worker stopped with SIGSTOP cannot kill anything, and its task keeps
// running. The task's supervisor fences it once the worker has been out of
// contact for its fence timeout, before the leader reruns it elsewhere: the
// two runs never overlap. The lost attempt is charged once, for at least
// the time it really ran, even after the worker comes back and reports it.
func TestStoppedWorkersTaskIsFencedBeforeItRunsElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	workers := map[string]*testcluster.Proc{"w1": c.startWorker("w1", "--cpu", "1"), "w2": c.startWorker("w2", "--cpu", "1")}
	c.waitNodes(ctx, map[string]bool{"w1": true, "w2": true})
	path := filepath.Join(c.dir, "ticks")
	// 8 s of ticks: far longer than the fence timeout and the loss
	// timeout together.
	job := c.submit(ctx, alpha, alphaUser, "ticks", 1, map[string]float64{"cpu": 1}, time.Minute, tickScript(path, 160))
	var victim string
	testcluster.WaitFor(ctx, t, "the task running", func() bool {
		tasks := c.tasks(ctx, job)
		_, ticking := ticks(t, path)[1]
		if len(tasks) == 1 && tasks[0].GetState() == longfairv1.TaskState_TASK_STATE_RUNNING && ticking {
			victim = tasks[0].GetNode()
			return true
		}
		return false
	})
	time.Sleep(500 * time.Millisecond)
	workers[victim].Signal(syscall.SIGSTOP)
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			workers[victim].Signal(syscall.SIGCONT)
			resumed = true
		}
	}
	defer resume()
	// The rerun starts on the other worker; the stopped one stays stopped
	// a while longer, long enough for two runs to overlap if nothing
	// fenced the first.
	testcluster.WaitFor(ctx, t, "the task rerun on the other worker", func() bool {
		_, ok := ticks(t, path)[2]
		return ok
	})
	t.Logf("rerun started %v after the worker was stopped", time.Since(stopped).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	resume()
	c.waitNodes(ctx, map[string]bool{victim: true})
	if j := c.waitEnded(ctx, job)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job ended %v", j.GetState())
	}

	// The supervisor did fence it, and the worker, back, reported it
	// (the ledger had lost it already and ignores the report).
	workers[victim].WaitLog(ctx, t, "task fenced: killed because the worker lost contact with the leader")
	runs := ticks(t, path)
	first, second := runs[1], runs[2]
	t.Logf("attempt 1 ticked %v to %v; attempt 2 from %v", first[0].Sub(stopped).Round(time.Millisecond), first[1].Sub(stopped).Round(time.Millisecond), second[0].Sub(stopped).Round(time.Millisecond))
	if !first[1].Before(second[0]) {
		t.Fatalf("the two runs overlapped for %v: attempt 1 still ran after attempt 2 started on the other worker", first[1].Sub(second[0]).Round(time.Millisecond))
	}
	task := c.tasks(ctx, job)[0]
	if task.GetAttempt() != 2 || task.GetNode() == victim {
		t.Errorf("the task ended as attempt %d on %s, want attempt 2 on the other worker", task.GetAttempt(), task.GetNode())
	}
	charges := checkCharges(ctx, t, c, alpha, job)
	lost := charges[fmt.Sprintf("job-%d.task-0.attempt-1", job)]
	if lost == nil {
		t.Fatal("the lost attempt was not charged")
	}
	ran := first[1].Sub(first[0])
	if rt := chargedRuntime(t, lost); rt < ran {
		t.Errorf("the lost attempt was charged for %v, but it ran for at least %v (until its worker fenced it)", rt, ran)
	} else {
		t.Logf("the lost attempt ran %v and was charged for %v", ran.Round(time.Millisecond), rt.Round(time.Millisecond))
	}
	c.verify(ctx)
}

// procGroupAlive reports whether a process in group pgid is alive (not a
// zombie), reading /proc.
func procGroupAlive(t testing.TB, pgid int) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for processes: %v", err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			return true
		}
	}
	return false
}

// A worker killed with kill -9 leaves nothing running: its tasks'
// supervisors see it go and kill their whole process groups, background
// processes included, well within the fence timeout.
func TestKilledWorkerLeavesNoTaskProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	w := c.startWorker("w1", "--cpu", "1")
	c.waitNodes(ctx, map[string]bool{"w1": true})
	pidFile := filepath.Join(c.dir, "pgid")
	// The shell leads the task's process group; the sleep in the
	// background is what a parent-death signal to the shell would miss.
	script := fmt.Sprintf(`sleep 300 & echo $$ > %s.tmp && mv %s.tmp %s; wait`, pidFile, pidFile, pidFile)
	c.submit(ctx, alpha, alphaUser, "sleeper", 1, map[string]float64{"cpu": 1}, time.Minute, script)
	var pgid int
	testcluster.WaitFor(ctx, t, "the task to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pgid > 0
	})
	if !procGroupAlive(t, pgid) {
		t.Fatalf("the task's process group %d is not running", pgid)
	}
	w.KillProcess()
	killed := time.Now()
	defer syscall.Kill(-pgid, syscall.SIGKILL) // whatever the outcome
	// Fence timeout 1 s and kill grace 1 s (startWorker): gone within 2 s
	// at the very latest; the supervisor does not even wait for the lease.
	for procGroupAlive(t, pgid) {
		if time.Since(killed) > 3*time.Second {
			t.Fatalf("the task's processes (group %d) still run %v after their worker was killed", pgid, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the task's process group was gone %v after kill -9 of its worker", time.Since(killed).Round(time.Millisecond))
}

// A worker killed with kill -9 and restarted at once (as systemd does)
// says it holds nothing, and the leader reruns what it held at once; the
// old tasks, fenced when their worker died, may take the kill grace to
// end. The new worker waits for them before it says hello, so the rerun
// never overlaps them, even for a task that ignores SIGTERM.
func TestRestartedWorkerWaitsForItsOldTasksToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	w := c.startWorker("w1", "--cpu", "1")
	c.waitNodes(ctx, map[string]bool{"w1": true})
	path := filepath.Join(c.dir, "ticks")
	job := c.submit(ctx, alpha, alphaUser, "stubborn", 1, map[string]float64{"cpu": 1}, time.Minute, `trap "" TERM; `+tickScript(path, 100))
	testcluster.WaitFor(ctx, t, "the task ticking", func() bool {
		_, ok := ticks(t, path)[1]
		return ok
	})
	w.KillProcess()
	killed := time.Now()
	c.startWorker("w1", "--cpu", "1")
	if j := c.waitEnded(ctx, job)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job ended %v", j.GetState())
	}
	runs := ticks(t, path)
	first, second := runs[1], runs[2]
	t.Logf("attempt 1 ticked until %v after the kill; attempt 2 from %v", first[1].Sub(killed).Round(time.Millisecond), second[0].Sub(killed).Round(time.Millisecond))
	if second[0].IsZero() {
		t.Fatalf("no second attempt ran: %v", runs)
	}
	if !first[1].Before(second[0]) {
		t.Fatalf("the two runs overlapped for %v: the restarted worker reran the task while its old run was still being killed", first[1].Sub(second[0]).Round(time.Millisecond))
	}
}
