package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Two workers join; an array's tasks run on them, each exactly once, and
// each attempt is charged once.
func TestWorkersRunAnArrayExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newTestCluster(t, 1)
	leader := c.waitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testWorker(t, c, "w1", nil)
	testWorker(t, c, "w2", nil)
	waitNodesUp(ctx, t, leader, "w1", "w2")

	runs := filepath.Join(t.TempDir(), "runs")
	script := fmt.Sprintf(`echo "$LONGFAIR_TASK_ID" >> %s`, runs)
	resp, err := longfairv1.NewJobsClient(c.conn(leader)).SubmitJob(ctx, shellJob(account, user, "array", 20, map[string]float64{"cpu": 1}, time.Minute, script))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	j := waitJobEnded(ctx, t, c, id)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetSucceededTasks() != 20 {
		t.Fatalf("job = %v", j)
	}
	lines := runLog(t, runs)
	if len(lines) != 20 {
		t.Fatalf("tasks ran %d times, want 20: %v", len(lines), lines)
	}
	for i, l := range lines {
		if i > 0 && lines[i-1] == l {
			t.Fatalf("task %s ran twice", l)
		}
	}
	var charged int64
	nodes := map[string]int{}
	for _, task := range allTasks(ctx, t, c, id) {
		if task.GetAttempt() != 1 || task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
			t.Errorf("task %d: attempt %d state %v, want one successful attempt", task.GetIndex(), task.GetAttempt(), task.GetState())
		}
		charged += task.GetChargedMicroSu()
		nodes[task.GetNode()]++
	}
	if charged != j.GetChargedMicroSu() {
		t.Fatalf("tasks were charged %d micro-SU, the job %d", charged, j.GetChargedMicroSu())
	}
	if len(nodes) != 2 {
		t.Errorf("tasks ran on %v, want both workers used", nodes)
	}
}
