package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// --exclusive on real workers: a job asking one core per task takes the
// cheapest class's nodes whole — one task per small node, none on the
// large node it would also fit — and other work placed while it runs
// goes only where it is not.
func TestExclusiveTasksTakeWholeNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	c.startWorker("small1", "--cpu", "2")
	c.startWorker("small2", "--cpu", "2")
	c.startWorker("large", "--cpu", "8")
	c.waitNodes(ctx, map[string]bool{"small1": true, "small2": true, "large": true})

	resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.SubmitJobResponse, error) {
		return longfairv1.NewJobsClient(conn).SubmitJob(ctx, &longfairv1.SubmitJobRequest{
			Account: alpha, User: alphaUser, Name: "whole", Demand: map[string]float64{"cpu": 1}, Tasks: 2, Exclusive: true,
			Walltime: durationpb.New(time.Minute), Command: []string{"sleep 4"}, RequestId: "whole",
		})
	})
	must(t, err, "submit the exclusive job")
	ex := resp.GetJob()
	if !ex.GetExclusive() || ex.GetDemand()["cpu"] != 2 {
		t.Fatalf("the exclusive job's demand is %v (exclusive %v); want a small node's whole 2 cores", ex.GetDemand(), ex.GetExclusive())
	}
	testcluster.WaitFor(ctx, t, "both exclusive tasks running", func() bool {
		return c.job(ctx, ex.GetId()).GetRunningTasks() == 2
	})
	other := c.submit(ctx, alpha, alphaUser, "beside", 1, map[string]float64{"cpu": 1}, time.Minute, "true")
	c.waitEnded(ctx, ex.GetId(), other)

	seen := map[string]bool{}
	for _, task := range c.tasks(ctx, ex.GetId()) {
		n := task.GetNode()
		if n != "small1" && n != "small2" || seen[n] {
			t.Fatalf("exclusive task %d ran on %s; want one task on each small node (seen %v)", task.GetIndex(), n, seen)
		}
		seen[n] = true
	}
	if n := c.tasks(ctx, other)[0].GetNode(); n != "large" {
		t.Fatalf("a one-core task placed while the exclusive tasks ran went to %s; want large, the only node not taken whole", n)
	}
}
