package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// submitThroughLeader proposes cmd on whichever server leads, retrying
// while leadership moves (cmd must carry a request id, so a retry of a
// write that did commit returns it rather than adding another).
func submitThroughLeader(ctx context.Context, t testing.TB, c *testCluster, cmd *fsm.SubmitJob) (fsm.JobInfo, error) {
	var info fsm.JobInfo
	err := retryUnavailable(ctx, t, func() error {
		var err error
		info, err = proposeFor[fsm.JobInfo](ctx, c.waitLeader(ctx), cmd)
		return err
	})
	return info, err
}

// logEntries reads the command entries after index from s's raft log.
func logEntries(t testing.TB, s *Server, after uint64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := after + 1; i <= s.raft.LastIndex(); i++ {
		var l raft.Log
		if err := s.stores.logs.GetLog(i, &l); err != nil {
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
	c := newTestCluster(t, 3)
	account, user := setupAccount(ctx, t, c, "group")
	before := c.waitLeader(ctx).raft.LastIndex()

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

	digest := c.waitConverged(ctx)
	leader := c.waitLeader(ctx)
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
	c := newTestCluster(t, 3)
	leader := c.waitLeader(ctx)
	before := leader.raft.LastIndex()
	if _, err := proposeFor[fsm.AccountInfo](ctx, leader, &fsm.CreateAccount{Name: "alone"}); err != nil {
		t.Fatal(err)
	}
	entries := logEntries(t, leader, before)
	if len(entries) != 1 || fsm.IsMulti(entries[0]) || entries[0][0] != fsm.CommandVersion {
		t.Fatalf("a lone proposal went into %d entries, the first of version %d", len(entries), entries[0][0])
	}

	// On a follower a proposal fails at once, saying where to go.
	_, err := proposeFor[fsm.AccountInfo](ctx, c.follower(ctx), &fsm.CreateAccount{Name: "elsewhere"})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "leader") {
		t.Fatalf("a proposal on a follower answered %v", err)
	}
}

// A caller that gives up while its proposal waits for an entry is told so,
// and the proposal is never applied; one already on its way is waited for.
func TestGroupCommitAbandonedProposalIsNotApplied(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newTestCluster(t, 3)
	leader := c.waitLeader(ctx)
	g := &leader.proposals

	// Keep every flusher slot taken, as a busy leader's are, so that
	// proposals wait in the queue.
	g.mu.Lock()
	g.flushers += groupsInFlight
	g.mu.Unlock()
	giveUp, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := proposeFor[fsm.AccountInfo](giveUp, leader, &fsm.CreateAccount{Name: "ghost"})
		errc <- err
	}()
	for queued := 0; queued == 0; {
		select {
		case <-ctx.Done():
			t.Fatal("the proposal never queued")
		case <-time.After(time.Millisecond):
		}
		g.mu.Lock()
		queued = len(g.queue)
		g.mu.Unlock()
	}
	stop()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("an abandoned proposal answered %v, want Canceled", err)
	}
	g.mu.Lock()
	g.flushers -= groupsInFlight
	g.mu.Unlock()

	if _, err := proposeFor[fsm.AccountInfo](ctx, leader, &fsm.CreateAccount{Name: "real"}); err != nil {
		t.Fatal(err)
	}
	c.waitConverged(ctx)
	for _, s := range c.running() {
		if _, err := s.FSM().Account("ghost"); fsm.KindOf(err) != fsm.KindNotFound {
			t.Fatalf("%s: the abandoned proposal was applied (%v)", s.NodeID(), err)
		}
		if _, err := s.FSM().Account("real"); err != nil {
			t.Fatalf("%s: %v", s.NodeID(), err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) != 0 || g.flushers != 0 {
		t.Fatalf("after the work: %d queued, %d flushers", len(g.queue), g.flushers)
	}
}

// take forms groups in arrival order within the count and size limits,
// drops abandoned proposals, sends an oversized one alone, and retires
// its flusher when nothing is left.
func TestGroupCommitTakeLimits(t *testing.T) {
	var g groupCommit
	var want [][]int // group sizes, by proposal number
	add := func(size int, abandoned bool) int {
		p := &proposal{data: make([]byte, size), done: make(chan struct{})}
		if abandoned {
			p.state.Store(proposalAbandoned)
		}
		g.queue = append(g.queue, p)
		return len(g.queue) - 1
	}
	// Group 1: maxGroupCommands small ones, with an abandoned one among
	// them that does not count.
	var first []int
	for i := range maxGroupCommands + 1 {
		k := add(100, i == 7)
		if i != 7 {
			first = append(first, k)
		}
	}
	want = append(want, first)
	// Group 2: the rest up to the byte limit; group 3: an oversized one
	// alone; group 4: a small one.
	half := maxGroupBytes / 2
	want = append(want, []int{add(half, false), add(half-200, false)})
	want = append(want, []int{add(maxGroupBytes+1, false)})
	want = append(want, []int{add(10, false)})
	all := slices.Clone(g.queue)
	g.flushers = 1

	for gi, w := range want {
		group := g.take()
		if len(group) != len(w) {
			t.Fatalf("group %d has %d proposals, want %d", gi, len(group), len(w))
		}
		size := 0
		for i, p := range group {
			if p != all[w[i]] {
				t.Fatalf("group %d position %d is not proposal %d", gi, i, w[i])
			}
			if p.state.Load() != proposalTaken {
				t.Fatalf("proposal %d in a group is not marked taken", w[i])
			}
			size += len(p.data)
		}
		if len(group) > 1 && size > maxGroupBytes {
			t.Fatalf("group %d holds %d bytes", gi, size)
		}
	}
	if rest := g.take(); rest != nil || g.flushers != 0 || len(g.queue) != 0 {
		t.Fatalf("after the last group: %d more, %d flushers, %d queued", len(rest), g.flushers, len(g.queue))
	}
}
