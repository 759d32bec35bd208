package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/worker"
)

// A job submitted before any node was known (nothing to judge it by) that
// turns out too big for every node must not hold back its account: the
// account's later job runs on the idle worker while the big one waits,
// and the big one starts once a node that can hold it joins. Once nodes
// are known, a task none of them can hold is refused at submission,
// holding nothing.
func TestOversizedJobWaitsWithoutBlockingItsAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))

	big, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "big", 1, map[string]float64{"cpu": 5}, time.Minute, "true"))
	if err != nil {
		t.Fatalf("a cpu=5 job with no node known yet: %v; want it accepted", err)
	}
	testcluster.Worker(t, c, "w1", nil) // cpu=4 mem=8G
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	small, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "small", 2, map[string]float64{"cpu": 1}, time.Minute, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if j := testcluster.WaitJobEnded(ctx, t, c, small.GetJob().GetId()); j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the later job ended %v, want succeeded: %v", j.GetState(), j)
	}
	j, err := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: big.GetJob().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if j.GetState() != longfairv1.JobState_JOB_STATE_PENDING || j.GetPendingTasks() != 1 {
		t.Fatalf("the cpu=5 job on a cpu=4 node is %v with %d pending; want it pending", j.GetState(), j.GetPendingTasks())
	}

	// Now that a node is known, the same shape is refused and holds nothing.
	ledgerc := longfairv1.NewLedgerClient(c.Conn(leader))
	before, err := ledgerc.GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	for _, refused := range []struct {
		rid    string
		demand map[string]float64
		says   string
	}{
		{"cpu-5", map[string]float64{"cpu": 5}, "no known node has cpu=5"},
		{"mic-100", map[string]float64{"cpu": 1, "mic": 100}, "no known node has mic=100"},
	} {
		_, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, refused.rid, 1, refused.demand, time.Minute, "true"))
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), refused.says) ||
			!strings.Contains(err.Error(), "largest known node has cpu=4 mem=8G") {
			t.Fatalf("submit %v with only a cpu=4 mem=8G node known: %v; want FailedPrecondition saying %q and the largest node", refused.demand, err, refused.says)
		}
	}
	after, err := ledgerc.GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(before, after) {
		t.Fatalf("refused submissions changed the balance: %v, then %v", before, after)
	}
	list, err := jobs.ListJobs(ctx, &longfairv1.ListJobsRequest{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetJobs()) != 2 {
		t.Fatalf("the account has %d jobs after the refusals, want the 2 accepted", len(list.GetJobs()))
	}

	// A node that can hold it joins: the big job starts.
	testcluster.Worker(t, c, "w2", func(cfg *worker.Config) { cfg.Resources = map[string]float64{"cpu": 8, "mem": 8 << 30} })
	if j := testcluster.WaitJobEnded(ctx, t, c, big.GetJob().GetId()); j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the cpu=5 job ended %v once a cpu=8 node joined, want succeeded", j.GetState())
	}
}
