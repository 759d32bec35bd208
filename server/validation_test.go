package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// Through a real server: a grant that has already expired (including at
// the Unix epoch, which the ledger would store as "never expires"), a job
// whose name holds terminal escapes, and a walltime of a nanosecond are
// refused with InvalidArgument and change nothing.
func TestServerRefusesExpiredGrantsEscapesAndTinyWalltimes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	s := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "phys")
	grants := longfairv1.NewGrantsClient(c.Conn(s))
	jobs := longfairv1.NewJobsClient(c.Conn(s))
	for name, call := range map[string]func() error{
		"grant expired an hour ago": func() error {
			_, err := grants.CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "late", Account: account, AmountMicroSu: 1e6,
				ExpiresAt: timestamppb.New(time.Now().Add(-time.Hour))})
			return err
		},
		"grant expired at the epoch": func() error {
			_, err := grants.CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "epoch", Account: account, AmountMicroSu: 1e6,
				ExpiresAt: timestamppb.New(time.Unix(0, 0))})
			return err
		},
		"job name with ESC": func() error {
			r := submitRequest(account, user, "", 1)
			r.Name = "x\x1b[2J\x1b[Hfake"
			_, err := jobs.SubmitJob(ctx, r)
			return err
		},
		"walltime of 1ns": func() error {
			r := submitRequest(account, user, "", 1)
			r.Walltime = durationpb.New(time.Nanosecond)
			_, err := jobs.SubmitJob(ctx, r)
			return err
		},
	} {
		err := call()
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: got %v, want InvalidArgument", name, err)
			continue
		}
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "future") && !strings.Contains(msg, "remove it") && !strings.Contains(msg, "at least 1s") {
			t.Errorf("%s: %q does not say what to do", name, msg)
		}
	}
	// Nothing was proposed: no job, no grant. (The digest is not compared:
	// the leader may commit entries of its own meanwhile.)
	if l, err := jobs.ListJobs(ctx, &longfairv1.ListJobsRequest{Account: account}); err != nil || len(l.GetJobs()) != 0 {
		t.Fatalf("refused jobs are listed: %v %v", l.GetJobs(), err)
	}
	list, err := grants.ListGrants(ctx, &longfairv1.ListGrantsRequest{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range list.GetGrants() {
		if g.GetId() == "late" || g.GetId() == "epoch" {
			t.Fatalf("refused grant %s is listed", g.GetId())
		}
	}
	// A grant that expires in the future is fine.
	if _, err := grants.CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "soon", Account: account, AmountMicroSu: 1e6,
		ExpiresAt: timestamppb.New(time.Now().Add(time.Hour))}); err != nil {
		t.Fatalf("a grant expiring in an hour is refused: %v", err)
	}
}

// A worker's goodbye reason is its own text: one holding a terminal escape
// is escaped, so the node-down entry that records it is not refused and
// the node goes down at once, as after any goodbye.
func TestGoodbyeWithControlCharactersTakesTheNodeDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w := newProtoWorker(t, c, "bye1", map[string]float64{"cpu": 1, "mem": 1 << 30})
	w.connect(ctx, true, nil, nil)
	testcluster.WaitNodesUp(ctx, t, leader, "bye1")
	if err := w.sendMsg(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Goodbye{Goodbye: &longfairv1.WorkerGoodbye{Reason: "bye\x1b[2J\nnode fine"}}}); err != nil {
		t.Fatal(err)
	}
	// A refused node-down would be proposed again and again with the same
	// reason, which outranks every other: the node would never go down.
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	testcluster.WaitFor(dctx, t, "node bye1 down after its goodbye", func() bool {
		for _, n := range leader.FSM().Nodes() {
			if n.ID == "bye1" {
				return !n.Up
			}
		}
		return false
	})
}
