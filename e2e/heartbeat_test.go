package e2e

import (
	"context"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// TestWorkerBeatsAtThePaceOfItsFenceTimeout: a worker with the default
// 30s fence timeout tells the leader so, is paced at 2s beats instead of
// half a second, and runs a task for longer than several beats without
// fencing it or losing touch with the leader.
func TestWorkerBeatsAtThePaceOfItsFenceTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := startCluster(ctx, t, 1, "--worker-loss-timeout", "40s")
	acct, user := c.account(ctx, "pace")
	w := c.startWorker("pace1", "--fence-timeout", "30s")
	connected := w.WaitLog(ctx, t, "connected to the leader")
	if hb, _ := connected["heartbeat"].(float64); time.Duration(hb) != 2*time.Second {
		t.Fatalf("a worker with a 30s fence timeout beats every %v, want 2s", time.Duration(hb))
	}

	job := c.submit(ctx, acct, user, "paced", 1, map[string]float64{"cpu": 1}, time.Minute, "sleep 7")
	if j := c.waitEnded(ctx, job)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("a task over several 2s beats ended %v", j.GetState())
	}
	for _, msg := range []string{"in contact with the leader again", "the stream to the leader went silent; reconnecting", "task fenced: killed because the worker lost contact with the leader"} {
		if fields, ok := testcluster.FindLog(w.LogPath, msg); ok {
			t.Errorf("at 2s beats the worker logged %q: %v", msg, fields)
		}
	}
	if _, ok := testcluster.FindLog(c.servers[0].LogPath, "worker stream ended"); ok {
		t.Error("at 2s beats the leader ended the worker's stream")
	}
}
