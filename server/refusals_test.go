package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// Refusals of the FSM reach a client over gRPC with their codes and whole
// messages: writes (refused on apply and returned through raft's future),
// unary reads and a streaming read (answered from the FSM directly, mapped
// by the interceptors).
func TestRefusalsReachClientsWithTheirCodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	account, user := setupAccount(ctx, t, c, "phys")
	conn := c.Conn(c.WaitLeader(ctx))
	accounts := longfairv1.NewAccountsClient(conn)
	jobs := longfairv1.NewJobsClient(conn)
	if _, err := accounts.CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "chem"}); err != nil {
		t.Fatal(err)
	}

	wantRefusal(t, first(accounts.CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: account})),
		codes.AlreadyExists, `account "phys" already exists`)
	wantRefusal(t, first(jobs.SubmitJob(ctx, submitRequest("chem", user, "", 1))),
		codes.PermissionDenied, user, "chem", "membership")
	huge := submitRequest(account, user, "", 1)
	huge.Demand = map[string]float64{"cpu": 1e6}
	huge.Tasks = 1_000_000
	wantRefusal(t, first(jobs.SubmitJob(ctx, huge)), codes.ResourceExhausted, "needs a hold of", "insufficient SU")
	gpu := submitRequest(account, user, "", 1)
	gpu.Demand = map[string]float64{"cpu": 1, "gpu": 1}
	wantRefusal(t, first(jobs.SubmitJob(ctx, gpu)), codes.InvalidArgument, "gpu")
	wantRefusal(t, first(longfairv1.NewGroupsClient(conn).SetGroupWeight(ctx, &longfairv1.SetGroupWeightRequest{Path: account, Weight: 1})),
		codes.FailedPrecondition, account, "same name")
	wantRefusal(t, first(jobs.CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: 999})), codes.NotFound, "999")

	wantRefusal(t, first(jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: 999})), codes.NotFound, "999")
	wantRefusal(t, first(accounts.GetAccount(ctx, &longfairv1.GetAccountRequest{Name: "bio"})), codes.NotFound, "bio")

	out, err := longfairv1.NewWorkersClient(conn).ReadTaskOutput(ctx, &longfairv1.ReadTaskOutputRequest{JobId: 999})
	if err == nil {
		_, err = out.Recv()
	}
	wantRefusal(t, err, codes.NotFound, "job 999 does not exist")
	if msg := status.Convert(err).Message(); strings.Count(msg, "999") != 1 {
		t.Errorf("stream refusal %q: want the FSM's message once, unwrapped", msg)
	}
}

func first[T any](_ T, err error) error { return err }
