package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// QuoteJob answers the hold SubmitJob then places, the cost per
// task-hour and the forecast start, and changes nothing; a quote of a
// shape no nodes hold, or beyond the account's SU, says why it would be
// refused. Two 4-core workers: one is filled by a 30-second job, so a
// 2-node quote forecasts its start when that job's walltime ends, and is
// reserved for (it would be the first ranked job that cannot start).
func TestQuoteJobAnswersWithoutSubmitting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	acct, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil) // cpu=4 mem=8G
	testcluster.Worker(t, c, "w2", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1", "w2")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	fill, err := jobs.SubmitJob(ctx, testcluster.ShellJob(acct, user, "fill", 1, map[string]float64{"cpu": 4}, 30*time.Second, "sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(ctx, t, "the filler to run", func() bool {
		j, err := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: fill.GetJob().GetId()})
		return err == nil && j.GetRunningTasks() == 1
	})
	ledgerc := longfairv1.NewLedgerClient(c.Conn(leader))
	before, err := ledgerc.GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	wide := &longfairv1.SubmitJobRequest{Account: acct, User: user, Demand: map[string]float64{"cpu": 4}, Nodes: 2, Tasks: 3,
		Walltime: durationpb.New(time.Hour), Command: []string{"mpirun ./a.out"}}
	q, err := jobs.QuoteJob(ctx, wide)
	if err != nil {
		t.Fatal(err)
	}
	if q.GetRefusal() != "" || q.GetNodes() != 2 || q.GetHoldMicroSu() <= 0 || q.GetTaskHourlyMicroSu()*3 != q.GetHoldMicroSu() {
		t.Fatalf("quote %v: want no refusal, and a hold of 3 tasks × 1 hour at the hourly cost", q)
	}
	started := fill.GetJob().GetSubmittedAt().AsTime()
	if !q.GetReserved() || q.GetForecastStart() == nil || q.GetForecastStart().AsTime().Before(started.Add(30*time.Second)) ||
		q.GetForecastStart().AsTime().After(started.Add(40*time.Second)) {
		t.Fatalf("quote %v: want a reservation when the filler's 30s walltime ends (it was submitted at %v)", q, started)
	}
	after, err := ledgerc.GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetHeldMicroSu() != before.GetHeldMicroSu() {
		t.Fatalf("a quote held SU: %d → %d", before.GetHeldMicroSu(), after.GetHeldMicroSu())
	}
	list, err := jobs.ListJobs(ctx, &longfairv1.ListJobsRequest{Account: acct})
	if err != nil || len(list.GetJobs()) != 1 {
		t.Fatalf("jobs after a quote: %v, %v; want only the filler", list, err)
	}
	// The hold a real submission places is the one quoted.
	sub, err := jobs.SubmitJob(ctx, wide)
	if err != nil {
		t.Fatal(err)
	}
	if sub.GetJob().GetHoldMicroSu() != q.GetHoldMicroSu() {
		t.Fatalf("submitted hold %d, quoted %d", sub.GetJob().GetHoldMicroSu(), q.GetHoldMicroSu())
	}

	for _, c := range []struct {
		req  *longfairv1.SubmitJobRequest
		want string
	}{
		{&longfairv1.SubmitJobRequest{Account: acct, User: user, Demand: map[string]float64{"cpu": 4}, Nodes: 3, Tasks: 1,
			Walltime: durationpb.New(time.Hour), Command: []string{"x"}}, "only 2 known nodes can hold that"},
		{&longfairv1.SubmitJobRequest{Account: acct, User: user, Demand: map[string]float64{"cpu": 4}, Nodes: 2, Tasks: 1_000_000,
			Walltime: durationpb.New(365 * 24 * time.Hour), Command: []string{"x"}}, "SU available"},
	} {
		q, err := jobs.QuoteJob(ctx, c.req)
		if err != nil || !strings.Contains(q.GetRefusal(), c.want) {
			t.Errorf("quote of %d nodes × %d tasks: %v, %v; want a refusal saying %q", c.req.GetNodes(), c.req.GetTasks(), q, err, c.want)
		}
	}
}
