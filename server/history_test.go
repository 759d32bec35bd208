package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// The fairness history is the same on every server, survives the
// leader's loss and a restart, and a user sees only their accounts in it.
func TestFairnessHistoryAcrossServers(t *testing.T) {
	c := testcluster.NewACL(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := c.WaitLeader(ctx)
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	conn := c.Conn(leader)
	for _, name := range []string{"phys", "chem"} {
		if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-" + name, Account: name, AmountMicroSu: 1e12}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := longfairv1.NewUsersClient(conn).CreateUser(admin, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys"}}); err != nil {
		t.Fatal(err)
	}
	annSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
	ann := testcluster.As(ctx, annSecret)
	if _, err := longfairv1.NewJobsClient(conn).SubmitJob(ann, &longfairv1.SubmitJobRequest{Account: "phys", User: "ann",
		Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: durationpb.New(time.Minute), Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	c.WaitConvergedRaftOnly(ctx)

	history := func(srv int, ctx context.Context, req *longfairv1.GetFairnessHistoryRequest) (*longfairv1.FairnessHistory, error) {
		return longfairv1.NewFairnessClient(c.Conn(c.Server(srv))).GetFairnessHistory(consistent(ctx), req)
	}
	all := &longfairv1.GetFairnessHistoryRequest{Resolution: longfairv1.HistoryResolution_HISTORY_RESOLUTION_HOUR}
	want, err := history(0, admin, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.GetSamples()) == 0 || want.GetStep().AsDuration() != time.Hour {
		t.Fatalf("the hour tier holds %v; want samples an hour apart", want)
	}
	// The hour's sample was taken by its first command that had an
	// account to record: phys's creation (unless the test straddled the
	// hour, when a later command took another with both).
	first := want.GetSamples()[0]
	if len(first.GetAccounts()) == 0 || first.GetAccounts()[0].GetAccount() != "phys" {
		t.Fatalf("the first sample holds %v, want phys first", first.GetAccounts())
	}
	for i := 1; i < 3; i++ {
		got, err := history(i, admin, all)
		if err != nil || !proto.Equal(got, want) {
			t.Fatalf("server %d's history differs: %v, %v\nwant %v", i, got, err, want)
		}
	}

	// A user sees only her accounts; naming another is refused with the
	// report's reason.
	mine, err := history(1, ann, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range mine.GetSamples() {
		for _, a := range s.GetAccounts() {
			if a.GetAccount() != "phys" {
				t.Errorf("ann's history shows account %s", a.GetAccount())
			}
		}
	}
	_, err = history(1, ann, &longfairv1.GetFairnessHistoryRequest{Accounts: []string{"chem"}})
	_, reportErr := longfairv1.NewFairnessClient(c.Conn(c.Server(1))).GetFairnessReport(ann, &longfairv1.GetFairnessReportRequest{Account: "chem"})
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != status.Convert(reportErr).Message() {
		t.Errorf("ann asking for chem's history: %v; want the report's refusal %v", err, reportErr)
	}
	_, err = history(1, admin, &longfairv1.GetFairnessHistoryRequest{Resolution: 7})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("an unknown resolution: %v, want InvalidArgument", err)
	}

	// The leader goes, and comes back after the others elected another:
	// every server still answers the same history.
	idx := c.Index(leader)
	c.Stop(idx)
	c.WaitLeader(ctx)
	c.Start(idx)
	c.WaitConvergedRaftOnly(ctx)
	for i := range 3 {
		got, err := history(i, admin, all)
		if err != nil {
			t.Fatal(err)
		}
		// Commands after the restart (the new term's) may add samples;
		// those before are unchanged.
		if len(got.GetSamples()) < len(want.GetSamples()) || !proto.Equal(got.GetSamples()[0], want.GetSamples()[0]) {
			t.Errorf("after the leader's restart, server %d's history is %v, want it to start as %v", i, got, want)
		}
	}
}
