package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Three servers and three workers (two CPU nodes, one with two MIC
// devices); two accounts submit competing arrays of short tasks and one
// submits a MIC array. Every task runs exactly once and is charged exactly
// once; MIC tasks run only on the MIC node, and tasks that run at the same
// time there never share a device.
func TestCompetingArraysRunExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Exactly once is what this test checks, not failover: fences long
	// enough that a machine loaded by other test packages never fences
	// a task, which is then rightly rerun (2 s did, under load).
	c := startCluster(ctx, t, 3, "--worker-loss-timeout", "15s")
	alpha, alphaUser := c.account(ctx, "alpha")
	beta, betaUser := c.account(ctx, "beta")
	fence := []string{"--fence-timeout", "10s"}
	c.startWorker("cpu1", append([]string{"--account", alpha, "--class", "cpu"}, fence...)...)
	c.startWorker("cpu2", append([]string{"--account", beta, "--class", "cpu"}, fence...)...)
	c.startWorker("mic1", append([]string{"--mic", "2", "--class", "mic"}, fence...)...)
	c.waitNodes(ctx, map[string]bool{"cpu1": true, "cpu2": true, "mic1": true})

	runs := filepath.Join(c.dir, "runs")
	script := recordScript(runs, "0.2")
	jobs := []uint64{
		c.submit(ctx, alpha, alphaUser, "alpha-array", 24, map[string]float64{"cpu": 1}, time.Minute, script),
		c.submit(ctx, beta, betaUser, "beta-array", 24, map[string]float64{"cpu": 1}, time.Minute, script),
		c.submit(ctx, alpha, alphaUser, "alpha-mic", 6, map[string]float64{"cpu": 1, "mic": 1}, time.Minute, script),
	}
	micJob := jobs[2]
	for _, j := range c.waitEnded(ctx, jobs...) {
		if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
			t.Fatalf("job %d ended %v: %v", j.GetId(), j.GetState(), j)
		}
	}

	byTask := runsByTask(readRuns(t, runs))
	if len(byTask) != 24+24+6 {
		t.Fatalf("%d distinct tasks ran, want 54", len(byTask))
	}
	for id, rs := range byTask {
		if len(rs) != 1 {
			t.Errorf("task %s ran %d times: %+v", id, len(rs), rs)
		}
	}
	// MIC tasks: only on the MIC node, one device each, and no device is
	// shared by two tasks running at the same time.
	var mic []taskRun
	for id, rs := range byTask {
		r := rs[0]
		isMIC := id[:len(fmt.Sprint(micJob))+1] == fmt.Sprint(micJob)+"."
		switch {
		case isMIC && (r.node != "mic1" || len(r.devices) != 1):
			t.Errorf("MIC task %s ran on %s with devices %v", id, r.node, r.devices)
		case isMIC:
			mic = append(mic, r)
		case len(r.devices) != 0:
			t.Errorf("CPU task %s was given MIC devices %v", id, r.devices)
		}
	}
	for i, a := range mic {
		for _, b := range mic[i+1:] {
			if a.devices[0] == b.devices[0] && a.start < b.end && b.start < a.end {
				t.Errorf("tasks %s and %s used device %s at the same time", a.task, b.task, a.devices[0])
			}
		}
	}

	// The ledger: one attempt per task, each charged exactly once, and the
	// jobs' totals are the sums of their tasks' charges.
	for _, acct := range []string{alpha, beta} {
		for id, entries := range c.charges(ctx, acct) {
			if len(entries) != 1 {
				t.Errorf("%s was charged %d times", id, len(entries))
			}
		}
	}
	for _, id := range jobs {
		var sum int64
		for _, task := range c.tasks(ctx, id) {
			if task.GetAttempt() != 1 || task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED || task.GetChargedMicroSu() <= 0 {
				t.Errorf("job %d task %d: attempt %d %v charged %d", id, task.GetIndex(), task.GetAttempt(), task.GetState(), task.GetChargedMicroSu())
			}
			if rt := task.GetRuntime().AsDuration(); rt < 200*time.Millisecond || rt > 10*time.Second {
				t.Errorf("job %d task %d: runtime %v, want the 0.2s it slept and a little", id, task.GetIndex(), rt)
			}
			sum += task.GetChargedMicroSu()
		}
		if j := c.job(ctx, id); sum != j.GetChargedMicroSu() {
			t.Errorf("job %d: tasks charged %d, job %d", id, sum, j.GetChargedMicroSu())
		}
	}
	c.verify(ctx)
}
