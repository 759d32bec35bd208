package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// TestExplainJobBehindAnotherAccount runs a real server and worker under
// drf: chem fills the node, then chem and physics each queue one task.
// The engine serves physics first (chem holds the whole node), so the
// explanation of chem's waiting job ranks chem 2 of 2 behind physics,
// waiting for room on the one node that could hold it; physics ranks 1.
func TestExplainJobBehindAnotherAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	chem, chemUser := setupAccount(ctx, t, c, "chem")
	phys, physUser := setupAccount(ctx, t, c, "physics")
	if _, err := longfairv1.NewOperatorClient(c.Conn(leader)).UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{Policy: proto.String("drf")}); err != nil {
		t.Fatal(err)
	}
	testcluster.Worker(t, c, "w1", nil) // cpu=4 mem=8G
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	cpu := map[string]float64{"cpu": 1}
	fill, err := jobs.SubmitJob(ctx, testcluster.ShellJob(chem, chemUser, "fill", 4, cpu, time.Minute, "sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(ctx, t, "chem's 4 tasks running", func() bool {
		j, err := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: fill.GetJob().GetId()})
		return err == nil && j.GetRunningTasks() == 4
	})
	later, err := jobs.SubmitJob(ctx, testcluster.ShellJob(chem, chemUser, "later", 1, cpu, time.Minute, "true"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := jobs.SubmitJob(ctx, testcluster.ShellJob(phys, physUser, "other", 1, cpu, time.Minute, "true"))
	if err != nil {
		t.Fatal(err)
	}

	x, err := jobs.ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: later.GetJob().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if x.GetJob().GetId() != later.GetJob().GetId() || x.GetPolicy() != "drf" || !x.GetRankExact() ||
		x.GetRank() != 2 || x.GetRankedAccounts() != 2 || x.GetFirstAccount() != phys {
		t.Fatalf("chem's job behind physics: rank %d of %d, first %q, policy %s (exact %v); want 2 of 2 behind %s",
			x.GetRank(), x.GetRankedAccounts(), x.GetFirstAccount(), x.GetPolicy(), x.GetRankExact(), phys)
	}
	if x.GetWait() != longfairv1.JobWait_JOB_WAIT_NO_ROOM || x.GetHoldingNodes() != 1 || x.GetClosestNode() != "w1" ||
		x.GetClosestFree()["cpu"] != 0 || x.GetAheadTasks() != 0 || x.GetAvailableMicroSu() <= 0 {
		t.Fatalf("chem's job on a full node: %v; want it waiting for room on w1, nothing ahead", x)
	}
	y, err := jobs.ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: other.GetJob().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if y.GetRank() != 1 || y.GetFirstAccount() != phys || y.GetRankKey()[0] >= x.GetRankKey()[0] {
		t.Fatalf("physics's job: rank %d, key %v (chem's %v); want first with the smaller dominant share", y.GetRank(), y.GetRankKey(), x.GetRankKey())
	}

	// Both at once with the filling job (nothing pending), over one view:
	// ExplainJob's answers, in the order asked. Only what the clock moves
	// may differ: how long the account has waited, the forecast start,
	// and β as the running tasks' usage accrues.
	fillX, err := jobs.ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: fill.GetJob().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	asked := []uint64{other.GetJob().GetId(), later.GetJob().GetId(), fill.GetJob().GetId()}
	xs, err := jobs.ExplainJobs(ctx, &longfairv1.ExplainJobsRequest{JobIds: asked})
	if err != nil {
		t.Fatal(err)
	}
	if got := xs.GetExplanations(); len(got) != len(asked) {
		t.Fatalf("ExplainJobs of %v: %d explanations", asked, len(got))
	}
	for i, want := range []*longfairv1.JobExplanation{y, x, fillX} {
		g := proto.Clone(xs.GetExplanations()[i]).(*longfairv1.JobExplanation)
		w := proto.Clone(want).(*longfairv1.JobExplanation)
		for _, e := range []*longfairv1.JobExplanation{g, w} {
			e.Waiting, e.ForecastStart, e.Beta = nil, nil, 0
		}
		if !proto.Equal(g, w) {
			t.Errorf("ExplainJobs' explanation of job %d:\n%v\nExplainJob's:\n%v", asked[i], g, w)
		}
	}

	// A job with nothing pending is returned alone; a missing one is an error.
	if _, err := jobs.CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: fill.GetJob().GetId()}); err != nil {
		t.Fatal(err)
	}
	ended := testcluster.WaitJobEnded(ctx, t, c, fill.GetJob().GetId())
	if z, err := jobs.ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: ended.GetId()}); err != nil || z.GetRank() != 0 || z.GetWait() != longfairv1.JobWait_JOB_WAIT_UNSPECIFIED {
		t.Fatalf("explain of an ended job: %v, %v", z, err)
	}
	if _, err := jobs.ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: 999}); status.Code(err) != codes.NotFound {
		t.Fatalf("explain of a missing job: %v; want NotFound", err)
	}
}

// TestExplainJobVisibility: ExplainJob obeys GetJob's rule (a user may
// explain the jobs of its own accounts only), and names the account
// ranked first only to its members.
func TestExplainJobVisibility(t *testing.T) {
	c := testcluster.NewACL(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	lc := c.Conn(c.WaitLeader(ctx))
	for _, a := range []string{"phys", "bio"} {
		if _, err := longfairv1.NewAccountsClient(lc).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: a}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(lc).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-" + a, Account: a, AmountMicroSu: 1e12}); err != nil {
			t.Fatal(err)
		}
	}
	for user, account := range map[string]string{"ann": "phys", "bob": "bio"} {
		if _, err := longfairv1.NewUsersClient(lc).CreateUser(admin, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{account}}); err != nil {
			t.Fatal(err)
		}
	}
	ann, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
	bob, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "bob", 0)
	jobs := longfairv1.NewJobsClient(lc)
	if _, err := jobs.SubmitJob(testcluster.As(ctx, ann), submitReq("phys", "ann", "ann-1")); err != nil {
		t.Fatal(err)
	}
	bobJob, err := jobs.SubmitJob(testcluster.As(ctx, bob), submitReq("bio", "bob", "bob-1"))
	if err != nil {
		t.Fatal(err)
	}
	req := &longfairv1.ExplainJobRequest{JobId: bobJob.GetJob().GetId()}
	if _, err := jobs.ExplainJob(testcluster.As(ctx, ann), req); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("ann explaining bob's job: %v; want PermissionDenied as for GetJob", err)
	}
	all, err := jobs.ExplainJob(admin, req)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := jobs.ExplainJob(testcluster.As(ctx, bob), req)
	if err != nil {
		t.Fatal(err)
	}
	// No worker is up: both accounts with work are ranked.
	want := ""
	if all.GetFirstAccount() == "bio" {
		want = "bio"
	}
	if all.GetRankedAccounts() != 2 || all.GetFirstAccount() == "" || all.GetWait() != longfairv1.JobWait_JOB_WAIT_NO_NODES ||
		mine.GetRank() != all.GetRank() || mine.GetFirstAccount() != want {
		t.Fatalf("admin sees rank %d of %d, first %q, wait %v; bob sees rank %d, first %q (want %q)",
			all.GetRank(), all.GetRankedAccounts(), all.GetFirstAccount(), all.GetWait(), mine.GetRank(), mine.GetFirstAccount(), want)
	}
}
