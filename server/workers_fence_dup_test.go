package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/server"
)

// A second process refused as a node's duplicate must leave the holder's
// fence bound alone: the holder's lost attempts are charged up to when it
// (not the refused process) surely fenced them.
func TestRefusedDuplicateKeepsTheHoldersFenceBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w, k := startedAttempt(ctx, t, c, leader)
	loss := time.Duration(leader.Config().WorkerLossTimeout)
	later := loss - server.FenceMargin // the latest fence bound a hello may give
	if later <= w.fencedWithin+time.Second {
		t.Fatalf("the test needs a loss timeout of more than %v", w.fencedWithin+time.Second+server.FenceMargin)
	}
	_, err := openRawFencing(ctx, t, c, "r1", "another-process", later)
	wantStatus(t, "a second process as r1", err, codes.AlreadyExists)

	w.heartbeat() // the holder's last sign of life
	time.Sleep(100 * time.Millisecond)
	w.disconnect()
	gone := time.Now()
	started := attemptState(t, leader.FSM(), k).StartedAt
	testcluster.WaitFor(ctx, t, "the attempt lost", func() bool { return attemptState(t, leader.FSM(), k).State == fsm.TaskLostState })
	lost := attemptState(t, leader.FSM(), k)
	if last := ledger.Time(gone.UnixNano()).Sub(started); lost.Runtime > last+w.fencedWithin {
		t.Fatalf("the lost attempt was charged for %v: beyond %v, its worker's last message plus the %v its own hello said it fences within (the refused process said %v)", lost.Runtime, last+w.fencedWithin, w.fencedWithin, later)
	}
}
