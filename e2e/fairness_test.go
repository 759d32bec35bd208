package e2e

import (
	"context"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// fairness reads the fairness report, by account.
func (c *cluster) fairness(ctx context.Context) map[string]*longfairv1.AccountFairness {
	c.t.Helper()
	r, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.FairnessReport, error) {
		return longfairv1.NewFairnessClient(conn).GetFairnessReport(consistent(ctx), &longfairv1.GetFairnessReportRequest{})
	})
	must(c.t, err, "fairness report")
	out := map[string]*longfairv1.AccountFairness{}
	for _, a := range r.GetAccounts() {
		out[a.GetAccount()] = a
	}
	return out
}

// twoContributors starts one server (with serverArgs) and two workers of
// 2 cpus, each contributed by one of two accounts, which therefore weigh
// the same.
func twoContributors(ctx context.Context, t *testing.T, serverArgs ...string) (c *cluster, alpha, alphaUser, beta, betaUser string) {
	c = startCluster(ctx, t, 1, serverArgs...)
	alpha, alphaUser = c.account(ctx, "alpha")
	beta, betaUser = c.account(ctx, "beta")
	c.startWorker("wa", "--cpu", "2", "--mem", "4G", "--account", alpha)
	c.startWorker("wb", "--cpu", "2", "--mem", "4G", "--account", beta)
	c.waitNodes(ctx, map[string]bool{"wa": true, "wb": true})
	f := c.fairness(ctx)
	if f[alpha].GetWeight() != 0.5 || f[beta].GetWeight() != 0.5 {
		t.Fatalf("weights %v and %v, want 0.5 each from the nodes they contributed", f[alpha].GetWeight(), f[beta].GetWeight())
	}
	return c, alpha, alphaUser, beta, betaUser
}

// Under hmrf, two accounts of equal contribution with continuously
// backlogged arrays get equal accumulated usage, even though one runs
// tasks three times as long as the other's (a scheduler fair in task
// counts would give it three times the usage): the fairness report moves
// as tasks run, and the ratio of their usage ends within 10% of 1. So
// with look-ahead queues, where each slot's next task is chosen before
// the one in it ends (sched.LookAheadView).
func TestLiveFairnessHMRFConverges(t *testing.T) {
	t.Run("without look-ahead", func(t *testing.T) { liveFairnessHMRFConverges(t) })
	t.Run("look-ahead", func(t *testing.T) { liveFairnessHMRFConverges(t, "--look-ahead") })
}

func liveFairnessHMRFConverges(t *testing.T, serverArgs ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, alpha, alphaUser, beta, betaUser := twoContributors(ctx, t, serverArgs...)
	if p := c.settings(ctx).GetPolicy(); p != "hmrf" {
		t.Fatalf("policy %q, want the default hmrf", p)
	}
	demand := map[string]float64{"cpu": 1, "mem": 1 << 30}
	// Both arrays become eligible at the same instant, so that neither
	// starts with a head start of the time between the two submissions
	// (a second on a loaded machine, a tenth of the usage this test sums).
	begin := timestamppb.New(time.Now().Add(2 * time.Second))
	at := func(r *longfairv1.SubmitJobRequest) { r.Begin = begin }
	c.submit(ctx, alpha, alphaUser, "alpha-backlog", 400, demand, time.Minute, "sleep 0.1", at)
	c.submit(ctx, beta, betaUser, "beta-backlog", 200, demand, time.Minute, "sleep 0.3", at)
	testcluster.WaitFor(ctx, t, "both arrays running", func() bool {
		f := c.fairness(ctx)
		return f[alpha].GetRunningTasks() > 0 && f[beta].GetRunningTasks() > 0
	})

	var ratio, lastAlpha, lastBeta float64
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		f := c.fairness(ctx)
		ua, ub := f[alpha].GetUsage()["cpu"], f[beta].GetUsage()["cpu"]
		if f[alpha].GetPendingTasks() == 0 || f[beta].GetPendingTasks() == 0 {
			t.Fatal("an account ran out of work: the test needs both backlogged")
		}
		if ua <= lastAlpha || ub <= lastBeta {
			t.Fatalf("usage did not move: alpha %v then %v, beta %v then %v", lastAlpha, ua, lastBeta, ub)
		}
		lastAlpha, lastBeta = ua, ub
		ratio = ua / ub
		t.Logf("usage alpha %.1f beta %.1f cpu·s, ratio %.3f, β alpha %.3f beta %.3f", ua, ub, ratio, f[alpha].GetBeta(), f[beta].GetBeta())
	}
	if math.Abs(ratio-1) > 0.1 {
		t.Fatalf("usage ratio %.3f after the run, want within 10%% of 1", ratio)
	}
}

// Under static, an idle account's partition stays idle: the busy account
// never holds more than its share, and half the cluster stays free.
func TestStaticLeavesAnIdleAccountsShareIdle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, _, beta, betaUser := twoContributors(ctx, t)
	_, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Settings, error) {
		return longfairv1.NewOperatorClient(conn).UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{Policy: proto.String("static")})
	})
	must(t, err, "set the policy to static")
	c.submit(ctx, beta, betaUser, "beta-backlog", 100, map[string]float64{"cpu": 1, "mem": 1 << 30}, time.Minute, "sleep 0.2")
	most := 0.0
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		held := c.fairness(ctx)[beta].GetAllocation()["cpu"]
		most = max(most, held)
		if held > 2 {
			t.Fatalf("beta holds %v cpus, more than its share of 2", held)
		}
		free := 0.0
		for _, n := range c.nodes(ctx) {
			free += n.GetFree()["cpu"]
		}
		if free < 2 {
			t.Fatalf("only %v cpus free: the idle account's share was used", free)
		}
	}
	if most != 2 {
		t.Fatalf("beta held at most %v cpus, want its whole share of 2", most)
	}
}

// settings reads the cluster settings.
func (c *cluster) settings(ctx context.Context) *longfairv1.Settings {
	c.t.Helper()
	s, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Settings, error) {
		return longfairv1.NewOperatorClient(conn).GetSettings(consistent(ctx), &longfairv1.GetSettingsRequest{})
	})
	must(c.t, err, "read the settings")
	return s
}
