package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// TestStalledWritesAreAppliedOnce: the first server a client calls applies
// each write and then never answers (as a server stopped with SIGSTOP
// right after committing). The client gives up on it at the attempt
// deadline and retries on the next server: a grant credits the account
// once and a submission makes one job. A token, which a retry would make
// twice, is not retried: the call says its outcome is unknown, and the
// cluster holds the one token the first attempt made.
func TestStalledWritesAreAppliedOnce(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 60*time.Second)
	direct, err := client.New(g.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	setupAccount(ctx, t, direct, "bio", "bob")
	before, err := direct.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: "bio"})
	if err != nil {
		t.Fatal(err)
	}

	proxy := startProxy(t, g.Addrs()[0], nil)
	proxy.hangOn(func(method string, n int) bool { return n == 1 })
	const attempt = 300 * time.Millisecond
	// A client that calls the silent server first. Each write gets a new
	// one, as each CLI command does: a client that met a silent server
	// sends its next calls elsewhere.
	newClient := func() *client.Client {
		c, err := client.New([]string{proxy.addr, g.Addrs()[0]}, client.WithAttemptTimeout(attempt))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// The caller's deadline is far off: only the attempt deadline can
	// end the wait on the silent server.
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	timed := func(what string, call func() error) error {
		t.Helper()
		start := time.Now()
		err := call()
		if took := time.Since(start); took > 10*attempt {
			t.Errorf("%s took %v with the first server silent; want about one attempt deadline (%v)", what, took, attempt)
		}
		return err
	}

	const amount = 7 * client.MicroSUPerSU
	if err := timed("grant", func() error {
		_, err := newClient().Grants().CreateGrant(callCtx, &longfairv1.CreateGrantRequest{Account: "bio", AmountMicroSu: amount})
		return err
	}); err != nil {
		t.Fatalf("grant through a server that applied it and went silent: %v", err)
	}
	var job *longfairv1.Job
	if err := timed("submit", func() (err error) {
		job, err = newClient().Submit(callCtx, smallJob("bio", "bob"))
		return err
	}); err != nil {
		t.Fatalf("submit through a server that applied it and went silent: %v", err)
	}
	for _, m := range []string{"/longfair.v1.Grants/CreateGrant", "/longfair.v1.Jobs/SubmitJob"} {
		if n := proxy.count(m); n != 1 {
			t.Errorf("%s reached the silent server %d times, want 1", m, n)
		}
	}
	after, err := direct.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: "bio"})
	if err != nil {
		t.Fatal(err)
	}
	if got := after.GetGrantedMicroSu() - before.GetGrantedMicroSu(); got != amount {
		t.Errorf("granted %s SU after one grant of %s SU that was retried after a stall", client.FormatSU(got), client.FormatSU(amount))
	}
	var jobs []uint64
	for j, err := range direct.AllJobs(ctx, &longfairv1.ListJobsRequest{Account: "bio"}) {
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.GetId())
	}
	if len(jobs) != 1 || jobs[0] != job.GetId() {
		t.Errorf("jobs %v after one submission (job %d) that was retried after a stall", jobs, job.GetId())
	}

	const desc = "made while the server stalled"
	err = timed("create token", func() error {
		_, err := newClient().ACL().CreateToken(callCtx, &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_USER, User: "bob", Description: desc})
		return err
	})
	if !errors.Is(err, client.ErrOutcomeUnknown) || status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "acl token list") {
		t.Fatalf("create token through a server that applied it and went silent: %v; want an outcome-unknown error that says how to check", err)
	}
	tokens, err := direct.ACL().ListTokens(ctx, &longfairv1.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	made := 0
	for _, tok := range tokens.GetTokens() {
		if tok.GetDescription() == desc {
			made++
		}
	}
	if made != 1 {
		t.Errorf("%d tokens exist after one token creation whose answer never came; want 1 (made by the first attempt, never repeated)", made)
	}

	// Reads move on from a silent server too.
	proxy.hangOn(func(method string, n int) bool { return true })
	if err := timed("read", func() error {
		_, err := newClient().Job(callCtx, job.GetId())
		return err
	}); err != nil {
		t.Fatalf("read with the first server silent: %v", err)
	}
}
