package e2e

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// Killing one node of a running MPI job (kill -9 of its worker) ends the
// job's processes on every node — the dead node's by its fence, the
// others' by the leader once the node is declared lost — charges it once,
// and leaves no rank running anywhere. Hydra's proxies put each rank in a
// session of its own, out of the task's process group: only the task's
// cgroup holds them, so the workers here confine (startConfinedWorker:
// node ids no other test uses, and their cgroups removed after).
func TestMPIJobEndsOnEveryNodeWhenOneIsLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	requireCgroups(t)
	c := startCluster(ctx, t, 1)
	acct, user := c.account(ctx, "physics")
	w1, _ := c.startConfinedWorker("mpi-a")
	w2, _ := c.startConfinedWorker("mpi-b")
	c.waitNodes(ctx, map[string]bool{w1: true, w2: true})
	hello := mpich.hello(t, c.dir)
	out := filepath.Join(c.dir, "sleepy.out")
	job := c.submitParallel(ctx, acct, user, "mpi-sleepy", 2, map[string]float64{"cpu": 2}, time.Minute, mpich.launcher(hello, out, "300"))
	var ranks []rankRun
	testcluster.WaitFor(ctx, t, "4 ranks to start", func() bool {
		ranks = readRanks(t, out)
		return len(ranks) == 4
	})
	for _, r := range ranks {
		defer syscall.Kill(r.pid, syscall.SIGKILL) // whatever the outcome
	}
	tasks := c.tasks(ctx, job)
	member := tasks[0].GetNodes()[1]
	c.workers[member].KillProcess()
	killed := time.Now()
	j := c.waitEnded(ctx, job)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_FAILED {
		t.Fatalf("the job ended %v after one of its nodes was lost, want failed (it may run once)", j.GetState())
	}
	for _, r := range ranks {
		for pidAlive(r.pid) {
			if time.Since(killed) > 20*time.Second {
				t.Fatalf("rank %d (pid %d on %s) still runs %v after node %s was lost", r.rank, r.pid, r.node, time.Since(killed).Round(time.Millisecond), member)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if n := jobCharges(c.charges(ctx, acct), job); n != 1 {
		t.Fatalf("job %d has %d charges, want 1", job, n)
	}
	t.Logf("every rank was gone %v after kill -9 of %s's worker", time.Since(killed).Round(time.Millisecond), member)
}
