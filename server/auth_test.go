package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

func wantStatus(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("%s: got %v (%v), want %v", what, got, err, code)
	}
}

func submitReq(account, user, name string) *longfairv1.SubmitJobRequest {
	return &longfairv1.SubmitJobRequest{
		RequestId: name, Account: account, User: user, Name: name,
		Demand: map[string]float64{"cpu": 1}, Tasks: 2, Walltime: durationpb.New(time.Minute), Command: []string{"true"},
	}
}

// TestSecurityRefusals is the security test: calls without a
// token, with a wrong token, by a user touching another account, and with
// a revoked token are each refused with the right code, on every server,
// and change nothing.
func TestSecurityRefusals(t *testing.T) {
	c := testcluster.NewACL(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	leader := c.WaitLeader(ctx)
	lc := c.Conn(leader)

	// Two accounts, one user in each, and money for both.
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
	worker, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)
	// Allowed calls go through: the refusals below are about the tokens.
	annJob, err := longfairv1.NewJobsClient(lc).SubmitJob(testcluster.As(ctx, ann), submitReq("phys", "ann", "ann-1"))
	if err != nil {
		t.Fatalf("ann submitting to her own account: %v", err)
	}
	bobJob, err := longfairv1.NewJobsClient(lc).SubmitJob(testcluster.As(ctx, bob), submitReq("bio", "bob", "bob-1"))
	if err != nil {
		t.Fatalf("bob submitting to his own account: %v", err)
	}
	c.WaitApplied(ctx)

	wrong := "lf_" + strings.Repeat("x", 43)
	refusals := []struct {
		name string
		code codes.Code
		call func(ctx context.Context, s *server.Server) error
	}{
		{"no token submits", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(ctx, submitReq("phys", "ann", "anon-1"))
			return err
		}},
		{"no token creates an account", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewAccountsClient(c.Conn(s)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "anon"})
			return err
		}},
		{"no token reads", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewLedgerClient(c.Conn(s)).GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: "phys"})
			return err
		}},
		{"no token saves a snapshot", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			st, err := longfairv1.NewOperatorClient(c.Conn(s)).SaveSnapshot(ctx, &longfairv1.SaveSnapshotRequest{})
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		}},
		{"wrong token grants", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewGrantsClient(c.Conn(s)).CreateGrant(testcluster.As(ctx, wrong), &longfairv1.CreateGrantRequest{Id: "g-x", Account: "phys", AmountMicroSu: 1})
			return err
		}},
		{"wrong scheme", codes.Unauthenticated, func(ctx context.Context, s *server.Server) error {
			md := metadata.AppendToOutgoingContext(ctx, longfairv1.AuthorizationMetadataKey, "Basic "+testcluster.BootstrapSecret)
			_, err := longfairv1.NewAccountsClient(c.Conn(s)).CreateAccount(md, &longfairv1.CreateAccountRequest{Name: "basic"})
			return err
		}},
		{"user submits to another account", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(testcluster.As(ctx, ann), submitReq("bio", "ann", "ann-bio"))
			return err
		}},
		{"user submits as another user", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(testcluster.As(ctx, ann), submitReq("bio", "bob", "ann-as-bob"))
			return err
		}},
		{"user cancels another account's job", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).CancelJob(testcluster.As(ctx, ann), &longfairv1.CancelJobRequest{JobId: bobJob.GetJob().GetId()})
			return err
		}},
		{"user reads another account's job", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).GetJob(testcluster.As(ctx, ann), &longfairv1.GetJobRequest{JobId: bobJob.GetJob().GetId()})
			return err
		}},
		{"user lists another account's job's tasks among her own", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).ListTasks(testcluster.As(ctx, ann), &longfairv1.ListTasksRequest{JobIds: []uint64{annJob.GetJob().GetId(), bobJob.GetJob().GetId()}})
			return err
		}},
		{"user asks why another account's job waits among her own", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).ExplainJobs(testcluster.As(ctx, ann), &longfairv1.ExplainJobsRequest{JobIds: []uint64{annJob.GetJob().GetId(), bobJob.GetJob().GetId()}})
			return err
		}},
		{"user reads another account's balance", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewLedgerClient(c.Conn(s)).GetBalance(testcluster.As(ctx, ann), &longfairv1.GetBalanceRequest{Account: "bio"})
			return err
		}},
		{"user lists another account's jobs", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).ListJobs(testcluster.As(ctx, ann), &longfairv1.ListJobsRequest{Account: "bio"})
			return err
		}},
		{"user grants", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewGrantsClient(c.Conn(s)).CreateGrant(testcluster.As(ctx, ann), &longfairv1.CreateGrantRequest{Id: "g-ann", Account: "phys", AmountMicroSu: 1})
			return err
		}},
		{"user joins another account", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewUsersClient(c.Conn(s)).AddMembership(testcluster.As(ctx, ann), &longfairv1.MembershipRequest{User: "ann", Account: "bio"})
			return err
		}},
		{"user creates a token", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewACLClient(c.Conn(s)).CreateToken(testcluster.As(ctx, ann), &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_ADMIN})
			return err
		}},
		{"user changes settings", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			p := "drf"
			_, err := longfairv1.NewOperatorClient(c.Conn(s)).UpdateSettings(testcluster.As(ctx, ann), &longfairv1.UpdateSettingsRequest{Policy: &p})
			return err
		}},
		{"user holds a worker stream", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			st, err := longfairv1.NewWorkersClient(c.Conn(s)).Connect(testcluster.As(ctx, ann))
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		}},
		{"worker submits", codes.PermissionDenied, func(ctx context.Context, s *server.Server) error {
			_, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(testcluster.As(ctx, worker), submitReq("phys", "ann", "worker-1"))
			return err
		}},
	}
	before := testcluster.Fingerprint(t, leader)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			for _, s := range c.Running() {
				wantStatus(t, r.name+" on "+s.NodeID(), r.call(ctx, s), r.code)
			}
		})
	}
	c.WaitApplied(ctx)
	for _, s := range c.Running() {
		if got := testcluster.Fingerprint(t, s); got != before {
			t.Fatalf("refused calls changed the state on %s:\nbefore %s\nafter  %s", s.NodeID(), before, got)
		}
	}

	// What a user may list is filtered to its accounts.
	list, err := longfairv1.NewAccountsClient(lc).ListAccounts(testcluster.As(ctx, ann), &longfairv1.ListAccountsRequest{})
	if err != nil || len(list.GetAccounts()) != 1 || list.GetAccounts()[0].GetName() != "phys" {
		t.Fatalf("ann lists accounts %v (%v), want only phys", list.GetAccounts(), err)
	}
	jobs, err := longfairv1.NewJobsClient(lc).ListJobs(testcluster.As(ctx, ann), &longfairv1.ListJobsRequest{})
	if err != nil || len(jobs.GetJobs()) != 1 || jobs.GetJobs()[0].GetId() != annJob.GetJob().GetId() {
		t.Fatalf("ann lists jobs %v (%v), want only her own", jobs.GetJobs(), err)
	}
	report, err := longfairv1.NewFairnessClient(lc).GetFairnessReport(testcluster.As(ctx, ann), &longfairv1.GetFairnessReportRequest{})
	if err != nil || len(report.GetAccounts()) != 1 || report.GetAccounts()[0].GetAccount() != "phys" {
		t.Fatalf("ann's fairness report %v (%v), want only phys", report.GetAccounts(), err)
	}
	all, err := longfairv1.NewAccountsClient(lc).ListAccounts(admin, &longfairv1.ListAccountsRequest{})
	if err != nil || len(all.GetAccounts()) != 2 {
		t.Fatalf("admin lists accounts %v (%v), want both", all.GetAccounts(), err)
	}

	// A revoked token is refused on every server at once: reads on the
	// leader, and writes through any server, since the leader checks a
	// forwarded call again.
	if _, err := longfairv1.NewACLClient(lc).RevokeToken(admin, &longfairv1.RevokeTokenRequest{Id: tokenIDOf(t, c, ann)}); err != nil {
		t.Fatal(err)
	}
	before = testcluster.Fingerprint(t, leader)
	for _, s := range c.Running() {
		_, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(testcluster.As(ctx, ann), submitReq("phys", "ann", "ann-revoked-"+s.NodeID()))
		wantStatus(t, "revoked token submits through "+s.NodeID(), err, codes.Unauthenticated)
		if !strings.Contains(status.Convert(err).Message(), "revoked") {
			t.Errorf("the refusal does not say the token was revoked: %v", err)
		}
	}
	_, err = longfairv1.NewLedgerClient(lc).GetBalance(testcluster.As(ctx, ann), &longfairv1.GetBalanceRequest{Account: "phys"})
	wantStatus(t, "revoked token reads on the leader", err, codes.Unauthenticated)
	c.WaitApplied(ctx)
	for _, s := range c.Running() {
		if got := testcluster.Fingerprint(t, s); got != before {
			t.Fatalf("calls with a revoked token changed the state on %s", s.NodeID())
		}
		_, err = longfairv1.NewLedgerClient(c.Conn(s)).GetBalance(testcluster.As(ctx, ann), &longfairv1.GetBalanceRequest{Account: "phys"})
		wantStatus(t, "revoked token reads on "+s.NodeID()+" once applied", err, codes.Unauthenticated)
	}
	// Bob is not affected.
	if _, err := longfairv1.NewLedgerClient(lc).GetBalance(testcluster.As(ctx, bob), &longfairv1.GetBalanceRequest{Account: "bio"}); err != nil {
		t.Fatalf("bob after ann's token was revoked: %v", err)
	}

	// No secret ever reached a log line.
	logs := c.Logs.String()
	for name, secret := range map[string]string{"bootstrap": testcluster.BootstrapSecret, "ann": ann, "bob": bob, "worker": worker} {
		if strings.Contains(logs, secret) {
			t.Errorf("the %s token's secret is in the server log", name)
		}
	}
	if !strings.Contains(logs, "acl token created") {
		t.Error("token creation is not in the log: the log check looks at the wrong output")
	}
}

// tokenIDOf finds the id of the token whose secret is secret, as its
// holder would: with WhoAmI.
func tokenIDOf(t *testing.T, c *testcluster.ACLCluster, secret string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok, err := longfairv1.NewACLClient(c.Conn(c.WaitLeader(ctx))).WhoAmI(testcluster.As(ctx, secret), &longfairv1.WhoAmIRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.GetId()
}

// TestFreshTokenWorksOnEveryServer: a token used the moment it is created
// is accepted by every server, even a follower that has not applied it
// yet (it hands the call to the leader).
func TestFreshTokenWorksOnEveryServer(t *testing.T) {
	c := testcluster.NewACL(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 5 {
		secret, tok := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_ADMIN, "", 0)
		for _, s := range c.Running() {
			got, err := longfairv1.NewACLClient(c.Conn(s)).WhoAmI(testcluster.As(ctx, secret), &longfairv1.WhoAmIRequest{})
			if err != nil {
				t.Fatalf("round %d: fresh token on %s: %v", i, s.NodeID(), err)
			}
			if got.GetId() != tok.GetId() || got.GetRole() != longfairv1.TokenRole_TOKEN_ROLE_ADMIN {
				t.Fatalf("round %d: WhoAmI on %s = %v, want %v", i, s.NodeID(), got, tok)
			}
		}
	}
}

// TestBootstrapRPCWorksOnce: without a token file, ACL.Bootstrap hands out
// the first admin token once; until then every call is refused.
func TestBootstrapRPCWorksOnce(t *testing.T) {
	c := testcluster.Empty(t)
	cfg := testcluster.Config(c.Dir(), "s1")
	cfg.Bootstrap = true
	cfg.ACL.Enabled = true
	c.Add(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := c.WaitLeader(ctx)
	conn := c.Conn(s)

	_, err := longfairv1.NewOperatorClient(conn).GetLeader(ctx, &longfairv1.GetLeaderRequest{})
	wantStatus(t, "a call before bootstrap", err, codes.Unauthenticated)

	first, err := longfairv1.NewACLClient(conn).Bootstrap(ctx, &longfairv1.BootstrapACLRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.GetSecret(), "lf_") || !first.GetToken().GetBootstrap() || first.GetToken().GetRole() != longfairv1.TokenRole_TOKEN_ROLE_ADMIN {
		t.Fatalf("bootstrap answered %v", first)
	}
	before := testcluster.Fingerprint(t, s)
	_, err = longfairv1.NewACLClient(conn).Bootstrap(ctx, &longfairv1.BootstrapACLRequest{})
	wantStatus(t, "a second bootstrap", err, codes.FailedPrecondition)
	if testcluster.Fingerprint(t, s) != before {
		t.Fatal("a refused bootstrap changed the state")
	}
	who, err := longfairv1.NewACLClient(conn).WhoAmI(testcluster.As(ctx, first.GetSecret()), &longfairv1.WhoAmIRequest{})
	if err != nil || who.GetId() != first.GetToken().GetId() {
		t.Fatalf("WhoAmI with the bootstrap token: %v, %v", who, err)
	}
	// The bootstrap token is the last admin: it cannot be revoked.
	_, err = longfairv1.NewACLClient(conn).RevokeToken(testcluster.As(ctx, first.GetSecret()), &longfairv1.RevokeTokenRequest{Id: who.GetId()})
	wantStatus(t, "revoking the last admin token", err, codes.FailedPrecondition)
	list, err := longfairv1.NewACLClient(conn).ListTokens(testcluster.As(ctx, first.GetSecret()), &longfairv1.ListTokensRequest{})
	if err != nil || len(list.GetTokens()) != 1 {
		t.Fatalf("ListTokens = %v, %v", list, err)
	}
	if strings.Contains(list.String(), first.GetSecret()) {
		t.Fatal("ListTokens shows a secret")
	}
}

// TestACLDisabledLetsCallsThrough: with the ACL off, calls need no token,
// but tokens can still be made and WhoAmI still checks them.
func TestACLDisabledLetsCallsThrough(t *testing.T) {
	c := testcluster.Empty(t)
	cfg := testcluster.Config(c.Dir(), "s1")
	cfg.Bootstrap = true
	c.Add(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := c.Conn(c.WaitLeader(ctx))
	if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
		t.Fatalf("a call without a token while the ACL is off: %v", err)
	}
	boot, err := longfairv1.NewACLClient(conn).Bootstrap(ctx, &longfairv1.BootstrapACLRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewACLClient(conn).WhoAmI(testcluster.As(ctx, boot.GetSecret()), &longfairv1.WhoAmIRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = longfairv1.NewACLClient(conn).WhoAmI(ctx, &longfairv1.WhoAmIRequest{})
	wantStatus(t, "WhoAmI without a token", err, codes.Unauthenticated)
}

// TestHealthNeedsNoToken: load balancers probe without a token.
func TestHealthNeedsNoToken(t *testing.T) {
	c := testcluster.NewACL(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := healthCheck(ctx, c.Conn(c.WaitLeader(ctx))); err != nil {
		t.Fatalf("health check without a token: %v", err)
	}
}

func healthCheck(ctx context.Context, conn grpc.ClientConnInterface) error {
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health status %v", resp.GetStatus())
	}
	return nil
}

// TestRevokedTokenEndsOpenStreams: a stream outlives the call that opened
// it, so its token is checked again while it is open; revoking the token
// ends the stream with Unauthenticated.
func TestRevokedTokenEndsOpenStreams(t *testing.T) {
	c := testcluster.NewACL(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := c.Conn(c.WaitLeader(ctx))
	secret, tok := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)
	// A worker stream waits up to server.HelloTimeout for the worker's hello;
	// this one never sends it.
	stream, err := longfairv1.NewWorkersClient(conn).Connect(testcluster.As(ctx, secret))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * server.TokenRecheckInterval) // the stream is open and checked at least once
	start := time.Now()
	if _, err := longfairv1.NewACLClient(conn).RevokeToken(testcluster.As(ctx, testcluster.BootstrapSecret), &longfairv1.RevokeTokenRequest{Id: tok.GetId()}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantStatus(t, "the open stream of a revoked token", err, codes.Unauthenticated)
	if d := time.Since(start); d > server.HelloTimeout/2 {
		t.Fatalf("the stream ended %v after the revocation", d)
	}
}
