package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/worker"
)

// readWorkerOutput reads the stdout of task 0 of job straight from a
// worker's TaskOutput service, as whoever ctx's token names.
func readWorkerOutput(ctx context.Context, conn *grpc.ClientConn, job uint64) (string, error) {
	s, err := longfairv1.NewTaskOutputClient(conn).ReadTaskOutput(ctx, &longfairv1.ReadTaskOutputRequest{JobId: job})
	if err != nil {
		return "", err
	}
	var out []byte
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return string(out), nil
		}
		if err != nil {
			return string(out), err
		}
		out = append(out, chunk.GetData()...)
	}
}

// TestWorkerOutputNeedsTheJobsReader: with the ACL on and TLS off, a
// worker's TaskOutput service serves a job's output only to a token the
// servers let read that job — an admin, the job's owner, another member
// of its account — and refuses a call without a token, a garbage token,
// a user of another account and the worker token of another node, none
// of which gets a byte. `longfair logs` through a server still works,
// the server forwarding its caller's token; and a revoked token stops
// reading from the worker within the worker's cache time.
func TestWorkerOutputNeedsTheJobsReader(t *testing.T) {
	c := testcluster.NewACL(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	leader := c.WaitLeader(ctx)
	lc := c.Conn(leader)
	for _, acct := range []string{"phys", "chem"} {
		if _, err := longfairv1.NewAccountsClient(lc).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: acct}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(lc).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-" + acct, Account: acct, AmountMicroSu: 1e12}); err != nil {
			t.Fatal(err)
		}
	}
	for user, acct := range map[string]string{"ann": "phys", "bob": "phys", "eve": "chem"} {
		if _, err := longfairv1.NewUsersClient(lc).CreateUser(admin, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{acct}}); err != nil {
			t.Fatal(err)
		}
	}
	user := longfairv1.TokenRole_TOKEN_ROLE_USER
	ann, _ := c.CreateToken(ctx, user, "ann", 0)
	bob, bobTok := c.CreateToken(ctx, user, "bob", 0)
	eve, _ := c.CreateToken(ctx, user, "eve", 0)
	w1, _ := createBoundToken(ctx, c, "w1")
	w2, _ := createBoundToken(ctx, c, "w2")

	ag := testcluster.Worker(t, c.Cluster, "w1", func(w *worker.Config) { w.Token = w1 })
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	const secret = "results of ann 42"
	sub, err := longfairv1.NewJobsClient(lc).SubmitJob(testcluster.As(ctx, ann), testcluster.ShellJob("phys", "ann", "private", 1, map[string]float64{"cpu": 1}, time.Minute, "echo "+secret))
	if err != nil {
		t.Fatal(err)
	}
	job := sub.GetJob().GetId()
	if j := testcluster.WaitJobEnded(admin, t, c.Cluster, job); j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the job ended %v", j.GetState())
	}

	wc, err := grpc.NewClient(ag.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	for _, r := range []struct {
		who  string
		ctx  context.Context
		code codes.Code
	}{
		{"no token", ctx, codes.Unauthenticated},
		{"a garbage token", testcluster.As(ctx, "lf_not-a-token-anyone-was-given-0123"), codes.Unauthenticated},
		{"a user of another account", testcluster.As(ctx, eve), codes.PermissionDenied},
		{"the worker token of another node", testcluster.As(ctx, w2), codes.PermissionDenied},
	} {
		out, err := readWorkerOutput(r.ctx, wc, job)
		if out != "" {
			t.Errorf("the worker gave %s the output %q", r.who, out)
		}
		wantStatus(t, "a direct read with "+r.who, err, r.code)
	}
	_, err = readWorkerOutput(ctx, wc, job)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "LONGFAIR_TOKEN") {
		t.Errorf("the refusal of a call without a token does not say how to give one: %q", msg)
	}
	for _, r := range []struct{ who, secret string }{{"an admin", testcluster.BootstrapSecret}, {"the job's owner", ann}, {"another member of its account", bob}} {
		if out, err := readWorkerOutput(testcluster.As(ctx, r.secret), wc, job); err != nil || out != secret+"\n" {
			t.Errorf("a direct read by %s: %q, %v; want the output", r.who, out, err)
		}
	}
	// Through a server, which forwards its caller's token to the worker.
	if out, err := readOutput(testcluster.As(ctx, ann), lc, job); err != nil || out != secret+"\n" {
		t.Errorf("the owner's read through a server: %q, %v; want the output", out, err)
	}
	if out, err := readOutput(testcluster.As(ctx, eve), lc, job); status.Code(err) != codes.PermissionDenied || out != "" {
		t.Errorf("another account's read through a server: %q, %v; want PermissionDenied", out, err)
	}

	// A revoked token stops reading from the worker once the worker's
	// positive answer (cached a few seconds) has run out.
	if _, err := longfairv1.NewACLClient(lc).RevokeToken(admin, &longfairv1.RevokeTokenRequest{Id: bobTok.GetId()}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(ctx, t, "the worker to refuse a revoked token", func() bool {
		_, err := readWorkerOutput(testcluster.As(ctx, bob), wc, job)
		return status.Code(err) == codes.Unauthenticated
	})
}
