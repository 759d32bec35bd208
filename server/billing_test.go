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
	"github.com/longfair/longfair/ledger"
)

// Issue 10 item 1, "free compute", through a real server and worker: a
// demand below one unit (1e-300 or 1e-6 of a core) is refused at the API
// with the field, the unit and the fix, holding nothing; a task asking
// only memory is held and charged the share of a node that memory is, by
// the rule and weights the server shows; the rule is a setting.
func TestTasksPayForWhatTheyOccupy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	balance := func() *longfairv1.Balance {
		t.Helper()
		b, err := longfairv1.NewLedgerClient(c.Conn(leader)).GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: account})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := balance()

	for _, cpu := range []float64{1e-300, 0.000001} {
		_, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "", 40, map[string]float64{"cpu": cpu}, time.Minute, "sleep 6"))
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "demand[cpu]") || !strings.Contains(err.Error(), "0.01 core") {
			t.Fatalf("submit of 40 tasks of %v core: %v; want InvalidArgument naming demand[cpu] and its 0.01-core unit", cpu, err)
		}
	}
	if after := balance(); !proto.Equal(after, before) {
		t.Fatalf("refused submissions changed the balance: %v, was %v", after, before)
	}

	settings, err := longfairv1.NewOperatorClient(c.Conn(leader)).GetSettings(ctx, &longfairv1.GetSettingsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if settings.GetBillingRule() != "max" || settings.GetBillingWeights()["mem"] <= 0 {
		t.Fatalf("settings: rule %q, weights %v; want max with memory priced", settings.GetBillingRule(), settings.GetBillingWeights())
	}
	rule, err := ledger.ParseBillingRule(settings.GetBillingRule())
	if err != nil {
		t.Fatal(err)
	}
	resources := settings.GetResources()
	weights := make(ledger.BillingWeights, len(resources))
	demand := make(ledger.Vector, len(resources))
	for k, name := range resources {
		weights[k] = settings.GetBillingWeights()[name]
		if name == "mem" {
			demand[k] = 1 << 30
		}
	}
	resp, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, "mem-only", 1, map[string]float64{"mem": 1 << 30}, time.Minute, "sleep 0.3"))
	if err != nil {
		t.Fatal(err)
	}
	wantHold, _ := ledger.WorstCaseHold(1, time.Minute, demand, weights, rule)
	if got := resp.GetJob().GetHoldMicroSu(); got == 0 || got != int64(wantHold) {
		t.Fatalf("a 1 GiB task of 1 minute holds %d micro-SU, want %d (> 0)", got, wantHold)
	}
	j := testcluster.WaitJobEnded(ctx, t, c, resp.GetJob().GetId())
	tasks := testcluster.AllTasks(ctx, t, c, j.GetId())
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || len(tasks) != 1 {
		t.Fatalf("job = %v", j)
	}
	wantCharge, _ := ledger.Cost(tasks[0].GetRuntime().AsDuration(), demand, weights, rule)
	if j.GetChargedMicroSu() == 0 || j.GetChargedMicroSu() != int64(wantCharge) {
		t.Fatalf("a 1 GiB task that ran %v was charged %d micro-SU, want %d (> 0)", tasks[0].GetRuntime().AsDuration(), j.GetChargedMicroSu(), wantCharge)
	}

	op := longfairv1.NewOperatorClient(c.Conn(leader))
	if _, err := op.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{BillingRule: proto.String("mean")}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("billing rule mean: %v, want InvalidArgument", err)
	}
	s, err := op.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{BillingRule: proto.String("sum")})
	if err != nil || s.GetBillingRule() != "sum" {
		t.Fatalf("set billing rule sum: %v, %v", s.GetBillingRule(), err)
	}
}
