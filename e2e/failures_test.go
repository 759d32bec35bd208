package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// checkCharges checks that every attempt of the jobs was charged exactly
// once and that each job's total is what its attempts were charged.
func checkCharges(ctx context.Context, t *testing.T, c *cluster, account string, jobs ...uint64) map[string]*longfairv1.JournalEntry {
	t.Helper()
	charges := c.charges(ctx, account)
	byID := map[string]*longfairv1.JournalEntry{}
	perJob := map[uint64]int64{}
	for id, entries := range charges {
		if len(entries) != 1 {
			t.Errorf("%s was charged %d times", id, len(entries))
		}
		byID[id] = entries[0]
		var job uint64
		fmt.Sscanf(id, "job-%d.", &job)
		perJob[job] += entries[0].GetAmountMicroSu()
	}
	for _, id := range jobs {
		if j := c.job(ctx, id); perJob[id] != j.GetChargedMicroSu() {
			t.Errorf("job %d: journal charges %d, job says %d", id, perJob[id], j.GetChargedMicroSu())
		}
	}
	return byID
}

// Killing the leader with kill -9 while arrays run: every task still
// finishes, no task runs more often than it was attempted, and every
// attempt is charged exactly once.
func TestLeaderKilledMidRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	alpha, alphaUser := c.account(ctx, "alpha")
	c.startWorker("w1")
	c.startWorker("w2")
	c.waitNodes(ctx, map[string]bool{"w1": true, "w2": true})
	runs := filepath.Join(c.dir, "runs")
	script := recordScript(runs, "0.3")
	jobs := []uint64{
		c.submit(ctx, alpha, alphaUser, "a1", 30, map[string]float64{"cpu": 1}, time.Minute, script),
		c.submit(ctx, alpha, alphaUser, "a2", 30, map[string]float64{"cpu": 1}, time.Minute, script),
	}
	testcluster.WaitFor(ctx, t, "some tasks to finish", func() bool {
		return c.job(ctx, jobs[0]).GetSucceededTasks() >= 8
	})
	leader := c.leader(ctx)
	leader.Kill()
	leader.dead = true
	t.Logf("killed leader %s", leader.ID)
	for _, j := range c.waitEnded(ctx, jobs...) {
		if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
			t.Fatalf("job %d ended %v", j.GetId(), j.GetState())
		}
	}
	if l := c.leader(ctx); l.ID == leader.ID {
		t.Fatal("the killed server still leads")
	}
	byTask := runsByTask(readRuns(t, runs))
	retried := 0
	for _, id := range jobs {
		for _, task := range c.tasks(ctx, id) {
			name := fmt.Sprintf("%d.%d", id, task.GetIndex())
			if task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
				t.Errorf("task %s ended %v", name, task.GetState())
			}
			if n := len(byTask[name]); n < 1 || n > int(task.GetAttempt()) {
				t.Errorf("task %s ran %d times in %d attempts", name, n, task.GetAttempt())
			}
			if task.GetAttempt() > 1 {
				retried++
			}
		}
	}
	t.Logf("%d of 60 tasks needed more than one attempt", retried)
	checkCharges(ctx, t, c, alpha, jobs...)
	c.verify(ctx)
}

// Killing a worker with kill -9: its node is marked down within seconds,
// its attempts are lost once it has surely fenced them and charged up to
// that fence, and its tasks run again elsewhere.
func TestWorkerKilledTasksRunElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	alpha, alphaUser := c.account(ctx, "alpha")
	c.startWorker("w1", "--cpu", "2")
	victim := c.startWorker("w2", "--cpu", "2")
	c.waitNodes(ctx, map[string]bool{"w1": true, "w2": true})
	runs := filepath.Join(c.dir, "runs")
	job := c.submit(ctx, alpha, alphaUser, "slow", 4, map[string]float64{"cpu": 1}, time.Minute, recordScript(runs, "3"))
	onVictim := map[int64]bool{}
	testcluster.WaitFor(ctx, t, "two tasks running on w2", func() bool {
		clear(onVictim)
		for _, task := range c.tasks(ctx, job) {
			if task.GetNode() == "w2" && task.GetState() == longfairv1.TaskState_TASK_STATE_RUNNING {
				onVictim[task.GetIndex()] = true
			}
		}
		return len(onVictim) == 2
	})
	time.Sleep(time.Second)
	victim.KillProcess()
	killed := time.Now()
	c.waitNodes(ctx, map[string]bool{"w2": false})
	detected := time.Since(killed)
	t.Logf("w2 marked down %v after kill -9", detected)
	if detected > 6*time.Second {
		t.Errorf("a dead worker was detected after %v, want within 5s", detected)
	}
	if j := c.waitEnded(ctx, job)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job ended %v", j.GetState())
	}
	charges := checkCharges(ctx, t, c, alpha, job)
	for _, task := range c.tasks(ctx, job) {
		if !onVictim[task.GetIndex()] {
			continue
		}
		// Only a lost attempt is attempted again.
		if task.GetAttempt() != 2 || task.GetNode() != "w1" || task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
			t.Errorf("task %d ended as attempt %d on %s (%v), want attempt 2 on w1", task.GetIndex(), task.GetAttempt(), task.GetNode(), task.GetState())
		}
		// The lost attempt is charged for the time it ran up to the moment
		// its worker had surely fenced it: the worker's last heartbeat (at
		// most half a second before the kill) plus its fence timeout and
		// kill grace (startWorker); not up to when the loss was declared
		// (the loss timeout after the last heartbeat).
		lost := charges[fmt.Sprintf("job-%d.task-%d.attempt-1", job, task.GetIndex())]
		if lost == nil || lost.GetAmountMicroSu() <= 0 {
			t.Errorf("the lost attempt of task %d was not charged: %v", task.GetIndex(), lost)
			continue
		}
		const fenced = workerFenceTimeout + workerKillGrace
		if rt := chargedRuntime(t, lost); rt < time.Second-500*time.Millisecond+fenced || rt > time.Second+fenced+500*time.Millisecond {
			t.Errorf("the lost attempt of task %d was charged for %v; want about the 1s it ran before the kill plus the %v its worker had to fence it (the failure was noticed after %v)", task.GetIndex(), rt, fenced, detected)
		}
	}
	for _, r := range readRuns(t, runs) {
		if r.node == "w2" {
			t.Errorf("task %s finished on the killed worker: its process outlived the worker", r.task)
		}
	}
	c.verify(ctx)
}

// A worker cut off from the cluster (stopped with SIGSTOP, so its
// connections stay open but silent) has its node marked down and, once it
// has surely fenced them, its tasks run elsewhere; when it comes back,
// what it reports about the old attempts is ignored: the ledger holds one
// successful attempt per task and charges every attempt once.
func TestPartitionedWorkerComesBackWithoutDoubleRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	alpha, alphaUser := c.account(ctx, "alpha")
	c.startWorker("w1", "--cpu", "2")
	cut := c.startWorker("w2", "--cpu", "2")
	c.waitNodes(ctx, map[string]bool{"w1": true, "w2": true})
	runs := filepath.Join(c.dir, "runs")
	job := c.submit(ctx, alpha, alphaUser, "cut", 4, map[string]float64{"cpu": 1}, time.Minute, recordScript(runs, "2"))
	onCut := map[int64]bool{}
	testcluster.WaitFor(ctx, t, "two tasks running on w2", func() bool {
		clear(onCut)
		for _, task := range c.tasks(ctx, job) {
			if task.GetNode() == "w2" && task.GetState() == longfairv1.TaskState_TASK_STATE_RUNNING {
				onCut[task.GetIndex()] = true
			}
		}
		return len(onCut) == 2
	})
	cut.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	c.waitNodes(ctx, map[string]bool{"w2": false})
	t.Logf("w2 marked down %v after it was cut off", time.Since(stopped))
	// Its tasks (sleep 2) end while it is stopped, fenced or finished:
	// it will report them. It stays stopped until they are rerun.
	testcluster.WaitFor(ctx, t, "w2's tasks rerun", func() bool {
		for _, task := range c.tasks(ctx, job) {
			if onCut[task.GetIndex()] && task.GetAttempt() < 2 {
				return false
			}
		}
		return true
	})
	cut.Signal(syscall.SIGCONT)
	c.waitNodes(ctx, map[string]bool{"w2": true})
	t.Logf("w2 up again %v after it was cut off", time.Since(stopped))
	if j := c.waitEnded(ctx, job)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetSucceededTasks() != 4 {
		t.Fatalf("job = %v", j)
	}
	charges := checkCharges(ctx, t, c, alpha, job)
	for i := range onCut {
		// Attempt 1 ended lost (only a lost attempt is tried again, which
		// the checks below confirm) and was charged once, up to the time
		// its node went down.
		if charges[fmt.Sprintf("job-%d.task-%d.attempt-1", job, i)] == nil {
			t.Errorf("the lost attempt of task %d was not charged", i)
		}
	}
	for _, task := range c.tasks(ctx, job) {
		if task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
			t.Errorf("task %d: latest attempt %d is %v", task.GetIndex(), task.GetAttempt(), task.GetState())
		}
		if onCut[task.GetIndex()] && task.GetAttempt() != 2 {
			t.Errorf("task %d: %d attempts, want 2", task.GetIndex(), task.GetAttempt())
		}
	}
	// The cut-off worker's processes did finish (the ledger ignored them):
	// the test did exercise a late report.
	late := 0
	for _, r := range readRuns(t, runs) {
		if r.node == "w2" && r.attempt == 1 && onCut[taskIndex(r.task)] {
			late++
		}
	}
	t.Logf("%d attempts finished on w2 while it was cut off", late)
	c.verify(ctx)
}

func taskIndex(id string) int64 {
	var job uint64
	var index int64
	fmt.Sscanf(id, "%d.%d", &job, &index)
	return index
}
