package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// submitThroughLeader proposes cmd on whichever server leads, retrying
// while leadership moves (cmd must carry a request id, so a retry of a
// write that did commit returns it rather than adding another).
func submitThroughLeader(ctx context.Context, t testing.TB, c *testcluster.Cluster, cmd *fsm.SubmitJob) (fsm.JobInfo, error) {
	var info fsm.JobInfo
	err := testcluster.RetryUnavailable(ctx, t, func() error {
		var err error
		info, err = server.ProposeFor[fsm.JobInfo](ctx, c.WaitLeader(ctx), cmd)
		return err
	})
	return info, err
}

// logEntries reads the command entries after index from s's raft log.
func logEntries(t testing.TB, s *server.Server, after uint64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := after + 1; i <= s.Raft().LastIndex(); i++ {
		var l raft.Log
		if err := s.LogStore().GetLog(i, &l); err != nil {
			t.Fatalf("read raft log entry %d: %v", i, err)
		}
		if l.Type == raft.LogCommand {
			out = append(out, l.Data)
		}
	}
	return out
}

// Concurrent submissions share raft entries, and inside them each caller
// gets its own answer: its job, its refusal, or — for a repeated request
// id — the one job all repeats stand for. Refused ones hold nothing, and
// every server ends with the same state.
func TestGroupCommitGivesEachCallerItsOwnAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	account, user := setupAccount(ctx, t, c, "group")
	before := c.WaitLeader(ctx).Raft().LastIndex()

	const n = 96
	type answer struct {
		info fsm.JobInfo
		err  error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := &fsm.SubmitJob{
				RequestID: fmt.Sprintf("group-%d", i), Account: account, User: user, Name: fmt.Sprintf("job-%d", i),
				Demand: map[string]float64{"cpu": 1}, Tasks: int64(1 + i%3), Walltime: time.Hour, Command: []string{"/bin/true"},
			}
			switch i % 4 {
			case 1:
				cmd.Account = fmt.Sprintf("nobody-%d", i)
			case 3:
				cmd.RequestID, cmd.Name, cmd.Tasks = "group-same", "same", 2
			}
			info, err := submitThroughLeader(ctx, t, c, cmd)
			answers[i] = answer{info, err}
		})
	}
	wg.Wait()

	jobs := map[uint64]fsm.JobInfo{}
	var same uint64
	for i, a := range answers {
		switch i % 4 {
		case 1:
			if status.Code(a.err) != codes.NotFound || !strings.Contains(a.err.Error(), fmt.Sprintf("nobody-%d", i)) {
				t.Fatalf("submission %d to an unknown account answered %v", i, a.err)
			}
			continue
		case 3:
			if same == 0 {
				same = a.info.ID
			}
			if a.err != nil || a.info.ID != same || a.info.Name != "same" {
				t.Fatalf("repeat %d of one request id answered job %d (%v), others job %d", i, a.info.ID, a.err, same)
			}
		default:
			if a.err != nil || a.info.Name != fmt.Sprintf("job-%d", i) || a.info.Tasks != int64(1+i%3) {
				t.Fatalf("submission %d answered %+v, %v", i, a.info, a.err)
			}
			if _, dup := jobs[a.info.ID]; dup {
				t.Fatalf("submission %d got job %d, which another submission got too", i, a.info.ID)
			}
		}
		jobs[a.info.ID] = a.info
	}
	if len(jobs) != n/2+1 {
		t.Fatalf("%d distinct jobs, want %d", len(jobs), n/2+1)
	}

	digest := c.WaitConverged(ctx)
	leader := c.WaitLeader(ctx)
	stored, _, err := leader.FSM().Jobs(fsm.JobFilter{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(jobs) {
		t.Fatalf("the FSM holds %d jobs, the callers were answered %d", len(stored), len(jobs))
	}
	var held ledger.SU
	for _, j := range jobs {
		held += j.Hold
	}
	bal, err := leader.FSM().Balance(account, leader.FSM().Now())
	if err != nil {
		t.Fatal(err)
	}
	if bal.Held != held {
		t.Fatalf("the account holds %v SU; its %d jobs hold %v", bal.Held, len(jobs), held)
	}

	entries := logEntries(t, leader, before)
	multi, commands := 0, 0
	for _, e := range entries {
		if !fsm.IsMulti(e) {
			commands++
			continue
		}
		parts, err := fsm.SplitMulti(e)
		if err != nil {
			t.Fatal(err)
		}
		multi++
		commands += len(parts)
	}
	if multi == 0 || len(entries) >= n || commands < n {
		t.Fatalf("%d submissions went into %d entries (%d of them multi-command) holding %d commands: they were not grouped", n, len(entries), multi, commands)
	}
	t.Logf("%d submissions in %d entries; state digest %x", n, len(entries), digest[:4])
}

// With nothing else waiting, a proposal goes at once, as a plain
// single-command entry, which servers of earlier releases apply too.
func TestGroupCommitLoneProposalIsSingleEntry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	before := leader.Raft().LastIndex()
	if _, err := server.ProposeFor[fsm.AccountInfo](ctx, leader, &fsm.CreateAccount{Name: "alone"}); err != nil {
		t.Fatal(err)
	}
	entries := logEntries(t, leader, before)
	if len(entries) != 1 || fsm.IsMulti(entries[0]) || entries[0][0] != fsm.CommandVersion {
		t.Fatalf("a lone proposal went into %d entries, the first of version %d", len(entries), entries[0][0])
	}

	// On a follower a proposal fails at once, saying where to go.
	_, err := server.ProposeFor[fsm.AccountInfo](ctx, c.Follower(ctx), &fsm.CreateAccount{Name: "elsewhere"})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "leader") {
		t.Fatalf("a proposal on a follower answered %v", err)
	}
}

// A caller that gives up while its proposal waits for an entry is told so,
// and the proposal is never applied; one already on its way is waited for.
func TestGroupCommitAbandonedProposalIsNotApplied(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	// Keep every flusher slot taken, as a busy leader's are, so that
	// proposals wait in the queue.
	leader.HoldFlushers(server.GroupsInFlight)
	giveUp, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := server.ProposeFor[fsm.AccountInfo](giveUp, leader, &fsm.CreateAccount{Name: "ghost"})
		errc <- err
	}()
	for queued := 0; queued == 0; {
		select {
		case <-ctx.Done():
			t.Fatal("the proposal never queued")
		case <-time.After(time.Millisecond):
		}
		queued, _ = leader.GroupCommitLoad()
	}
	stop()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("an abandoned proposal answered %v, want Canceled", err)
	}
	leader.HoldFlushers(-server.GroupsInFlight)

	if _, err := server.ProposeFor[fsm.AccountInfo](ctx, leader, &fsm.CreateAccount{Name: "real"}); err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(ctx)
	for _, s := range c.Running() {
		if _, err := s.FSM().Account("ghost"); fsm.KindOf(err) != fsm.KindNotFound {
			t.Fatalf("%s: the abandoned proposal was applied (%v)", s.NodeID(), err)
		}
		if _, err := s.FSM().Account("real"); err != nil {
			t.Fatalf("%s: %v", s.NodeID(), err)
		}
	}
	if queued, flushers := leader.GroupCommitLoad(); queued != 0 || flushers != 0 {
		t.Fatalf("after the work: %d queued, %d flushers", queued, flushers)
	}
}
