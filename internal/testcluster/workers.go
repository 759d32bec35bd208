package testcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/server"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/worker"
)

// Worker starts a worker agent in this process that joins the
// cluster's gossip pool through its first running server.
func Worker(t testing.TB, c *Cluster, id string, tune func(*worker.Config)) *worker.Agent {
	t.Helper()
	return WorkerLogging(t, c, id, tune, c.logger.With("worker", id))
}

// WorkerLogging is Worker logging to logger.
func WorkerLogging(t testing.TB, c *Cluster, id string, tune func(*worker.Config), logger *slog.Logger) *worker.Agent {
	t.Helper()
	cfg := worker.DefaultConfig()
	cfg.NodeID = id
	cfg.Join = []string{c.Running()[0].GossipAddr()}
	cfg.GossipAddr = "127.0.0.1:0"
	cfg.GRPCAddr = "127.0.0.1:0"
	cfg.WorkDir = filepath.Join(t.TempDir(), id)
	cfg.Resources = map[string]float64{"cpu": 4, "mem": 8 << 30}
	cfg.KillGrace = 500 * time.Millisecond
	// Fenced within 3 s of losing the leader (with the kill grace): the
	// harness's servers rerun tasks after 4 s. Shorter fences were
	// reached by heartbeats delayed under -race on two loaded cores.
	cfg.FenceTimeout = 2500 * time.Millisecond
	// Test clusters in several packages run at once and reuse node ids,
	// and a confined worker reaps the cgroups its node id's predecessor
	// left: a test that wants confinement asks for it, with an id of its
	// own.
	cfg.Unconfined = true
	if tune != nil {
		tune(&cfg)
	}
	ag, err := worker.New(cfg, logger)
	if err != nil {
		t.Fatalf("new worker %s: %v", id, err)
	}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatalf("start worker %s: %v", id, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ag.Shutdown(ctx)
	})
	return ag
}

// WaitNodesUp waits until the given nodes are up in the ledger of s.
func WaitNodesUp(ctx context.Context, t testing.TB, s *server.Server, ids ...string) {
	t.Helper()
	WaitFor(ctx, t, fmt.Sprintf("nodes %v up", ids), func() bool {
		up := map[string]bool{}
		for _, n := range s.FSM().Nodes() {
			up[n.ID] = n.Up
		}
		for _, id := range ids {
			if !up[id] {
				return false
			}
		}
		return true
	})
}

// WaitFor polls cond every 20ms until it holds or ctx ends.
func WaitFor(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ShellJob is a job whose tasks run script.
func ShellJob(account, user, rid string, tasks int64, demand map[string]float64, walltime time.Duration, script string) *longfairv1.SubmitJobRequest {
	return &longfairv1.SubmitJobRequest{
		Account: account, User: user, Name: rid, Demand: demand, Tasks: tasks,
		Walltime: durationpb.New(walltime), Command: []string{script}, RequestId: rid,
	}
}

// WaitJobEnded waits until a job has ended and returns it.
func WaitJobEnded(ctx context.Context, t testing.TB, c *Cluster, id uint64) *longfairv1.Job {
	t.Helper()
	var j *longfairv1.Job
	WaitFor(ctx, t, fmt.Sprintf("job %d to end", id), func() bool {
		var err error
		j, err = longfairv1.NewJobsClient(c.Conn(c.WaitLeader(ctx))).GetJob(ctx, &longfairv1.GetJobRequest{JobId: id})
		if err != nil {
			return false
		}
		switch j.GetState() {
		case longfairv1.JobState_JOB_STATE_SUCCEEDED, longfairv1.JobState_JOB_STATE_FAILED, longfairv1.JobState_JOB_STATE_CANCELLED:
			return true
		}
		return false
	})
	return j
}

// RunLog reads the lines tasks appended to a shared file, sorted.
func RunLog(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	lines := strings.Fields(strings.TrimSpace(string(b)))
	sort.Strings(lines)
	return lines
}

// AllTasks lists the latest attempt of every task of a job.
func AllTasks(ctx context.Context, t testing.TB, c *Cluster, job uint64) []*longfairv1.Task {
	t.Helper()
	var out []*longfairv1.Task
	token := ""
	for {
		resp, err := longfairv1.NewJobsClient(c.Conn(c.WaitLeader(ctx))).ListTasks(ctx, &longfairv1.ListTasksRequest{JobId: job, PageToken: token, PageSize: 1000})
		if err != nil {
			t.Fatalf("list tasks of job %d: %v", job, err)
		}
		out = append(out, resp.GetTasks()...)
		if token = resp.GetNextPageToken(); token == "" {
			return out
		}
	}
}
