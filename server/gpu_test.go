package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/worker"
)

// GPUs are a resource like any other once the cluster declares one: a
// node's GPUs are placed, each running task gets its own index in
// CUDA_VISIBLE_DEVICES, the account's usage counts GPU-seconds, and each
// task is charged by the GPU's billing weight (under max, the largest of
// its weighted resources: here its GPU, not its core). No GPU here: the
// worker is given two.
func TestGPUsAreScheduledBoundAndBilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	acct, user := setupAccount(ctx, t, c, "ml")
	ops := longfairv1.NewOperatorClient(c.Conn(leader))
	set, err := ops.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{
		AddResources:   []string{"gpu"},
		BillingWeights: map[string]float64{"cpu": 1, "mem": 0.25 / (1 << 30), "mic": 8, "gpu": 10},
		Backfill:       proto.String("greedy"),
	})
	if err != nil {
		t.Fatal(err)
	}
	testcluster.Worker(t, c, "g1", func(cfg *worker.Config) { cfg.Resources["gpu"] = 2 })
	testcluster.WaitNodesUp(ctx, t, leader, "g1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	dir := t.TempDir()
	sub, err := jobs.SubmitJob(ctx, testcluster.ShellJob(acct, user, "train", 3, map[string]float64{"cpu": 1, "gpu": 1}, time.Minute,
		`echo "gpu=$CUDA_VISIBLE_DEVICES" > `+dir+`/$LONGFAIR_TASK_INDEX; sleep 0.5`))
	if err != nil {
		t.Fatal(err)
	}
	j := testcluster.WaitJobEnded(ctx, t, c, sub.GetJob().GetId())
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("job ended %v", j.GetState())
	}
	tasks, err := jobs.ListTasks(ctx, &longfairv1.ListTasksRequest{JobId: j.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	weights := make(ledger.BillingWeights, len(set.GetResources()))
	demand := ledger.NewVector(len(set.GetResources()))
	for i, r := range set.GetResources() {
		weights[i] = set.GetBillingWeights()[r]
		if r == "cpu" || r == "gpu" {
			demand[i] = 1
		}
	}
	for _, task := range tasks.GetTasks() {
		want, err := ledger.Cost(task.GetRuntime().AsDuration(), demand, weights, ledger.BillingMax)
		if err != nil {
			t.Fatal(err)
		}
		if task.GetChargedMicroSu() != int64(want) {
			t.Errorf("task %d ran %v and was charged %d µSU; one GPU at 10 SU/h is %d", task.GetIndex(), task.GetRuntime().AsDuration(), task.GetChargedMicroSu(), want)
		}
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint(task.GetIndex())))
		if out := strings.TrimSpace(string(b)); out != "gpu=0" && out != "gpu=1" {
			t.Errorf("task %d saw %q, want one of the node's two GPUs", task.GetIndex(), out)
		}
	}
	rep, err := longfairv1.NewFairnessClient(c.Conn(leader)).GetFairnessReport(ctx, &longfairv1.GetFairnessReportRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.GetAccounts()) != 1 || rep.GetAccounts()[0].GetUsage()["gpu"] < 1.5 {
		t.Fatalf("fairness report %v: want the account's GPU usage to count its 3 × 0.5 GPU-seconds", rep.GetAccounts())
	}
}
