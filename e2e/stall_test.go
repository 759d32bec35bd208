package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// A server stopped with SIGSTOP keeps its sockets open: connections to it
// are accepted by the kernel and requests are taken, but nothing answers.
// These tests check that clients, and servers forwarding to a stopped
// leader, give up on it after an attempt deadline and carry on with the
// others.

// pause stops a server process until the test ends (or resume).
func pause(t testing.TB, s *serverProc) {
	t.Helper()
	s.Signal(syscall.SIGSTOP)
	t.Cleanup(func() { s.Signal(syscall.SIGCONT) })
}

// followers are the live servers other than leader.
func (c *cluster) followers(leader *serverProc) []*serverProc {
	var out []*serverProc
	for _, s := range c.live() {
		if s != leader {
			out = append(out, s)
		}
	}
	return out
}

func grpcAddrs(servers ...*serverProc) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.GRPC)
	}
	return out
}

// newClient is a library client of the servers in the order given.
func newClient(t testing.TB, addrs []string, opts ...client.Option) *client.Client {
	t.Helper()
	cl, err := client.New(addrs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// overall is the caller's deadline in these tests, as the CLI's --timeout:
// a call that waits on the stopped server until it runs out fails.
const overall = 20 * time.Second

// stallBound is what a call may take when the first server it tries is
// stopped: one attempt deadline (client.DefaultAttemptTimeout) and the
// call on a running server, with room for a loaded machine; well under
// overall.
const stallBound = 7 * time.Second

// The first address a client is given is a stopped follower: a submission
// and reads (consistent and stale, through the library and the CLI) are
// answered by the other servers within a few seconds, not at the caller's
// deadline.
func TestStoppedFirstServerDoesNotStallCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	alpha, alphaUser := c.account(ctx, "alpha")
	leader := c.leader(ctx)
	followers := c.followers(leader)
	stopped := followers[0]
	pause(t, stopped)
	t.Logf("stopped follower %s; the leader is %s", stopped.ID, leader.ID)
	addrs := grpcAddrs(stopped, followers[1], leader)

	timed := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, overall)
		defer ccancel()
		start := time.Now()
		err := call(cctx)
		took := time.Since(start)
		t.Logf("%s with %s stopped took %v", what, stopped.ID, took.Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%s with the first server stopped failed after %v: %v", what, took, err)
		}
		if took > stallBound {
			t.Errorf("%s took %v with the first server stopped; want under %v (the caller's deadline is %v)", what, took, stallBound, overall)
		}
	}

	// Each call gets a new client, as each CLI command does: none knows
	// yet that the first server is stopped.
	var job *longfairv1.Job
	timed("submit", func(ctx context.Context) (err error) {
		job, err = newClient(t, addrs).Submit(ctx, client.JobSpec{Account: alpha, User: alphaUser, Name: "first-stopped",
			Demand: map[string]float64{"cpu": 1}, Walltime: time.Minute, Command: []string{"true"}})
		return err
	})
	timed("consistent read", func(ctx context.Context) error {
		got, err := newClient(t, addrs, client.WithConsistentReads(true)).Job(ctx, job.GetId())
		if err == nil && got.GetName() != "first-stopped" {
			err = fmt.Errorf("job %d is %v", job.GetId(), got)
		}
		return err
	})
	timed("stale read", func(ctx context.Context) error {
		_, err := newClient(t, addrs).Jobs().ListJobs(client.StaleRead(ctx), &longfairv1.ListJobsRequest{Account: alpha})
		return err
	})
	timed("snapshot save (a stream)", func(ctx context.Context) error {
		info, err := newClient(t, addrs).SaveSnapshot(ctx, io.Discard, nil)
		if err == nil && info.Bytes == 0 {
			err = errors.New("the snapshot is empty")
		}
		return err
	})
	timed("longfair jobs", func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, binary, "jobs", "--account", alpha, "--timeout", overall.String())
		cmd.Env = append(cmd.Environ(), client.EnvAddr+"="+strings.Join(addrs, ","))
		out, err := cmd.CombinedOutput()
		if err == nil && !strings.Contains(string(out), "first-stopped") {
			err = fmt.Errorf("the listing lacks the job:\n%s", out)
		}
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		return err
	})
}

// ack is one acknowledged write.
type ack struct {
	writer int
	at     time.Time
}

// writeLoad has writers submit jobs and create grants, each write named
// after its writer and number, until stop is closed.
type writeLoad struct {
	mu     sync.Mutex
	acks   []ack
	jobs   map[string]bool // acknowledged job names
	grants map[string]bool // notes of acknowledged grants
	errs   []string
}

func (w *writeLoad) acked(writer int, kind map[string]bool, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.acks = append(w.acks, ack{writer, time.Now()})
	kind[name] = true
}

func (w *writeLoad) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, err.Error())
}

// ackedBy counts a writer's acknowledgements after t.
func (w *writeLoad) ackedBy(writer int, after time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, a := range w.acks {
		if a.writer == writer && a.at.After(after) {
			n++
		}
	}
	return n
}

// gap is the longest time without an acknowledgement (of writer, or of
// anyone when writer < 0) from `from` to the first acknowledgement after
// `to`.
func (w *writeLoad) gap(writer int, from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var times []time.Time
	for _, a := range w.acks {
		if writer < 0 || a.writer == writer {
			times = append(times, a.at)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	longest, last := time.Duration(0), from
	for _, at := range times {
		if !at.After(from) {
			continue
		}
		longest = max(longest, at.Sub(last))
		last = at
		if at.After(to) {
			return longest
		}
	}
	return max(longest, time.Since(last))
}

// The leader is stopped for 8 s while clients write through every server
// order: writes are acknowledged again shortly after the followers elect
// a new leader, not when the old one resumes; and once it resumes, no
// submission or grant exists twice, though attempts that timed out on the
// stopped leader were retried elsewhere.
func TestStoppedLeaderWritesResumeOnNewLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	alpha, alphaUser := c.account(ctx, "alpha")
	leader := c.leader(ctx)
	f := c.followers(leader)
	// The leader first, in the middle and last: clients calling it
	// directly, and through followers that forward to it. The last
	// writer has no attempt deadline (as a client that predates them, or
	// grpcurl): only the follower it calls, which forwards to the
	// stopped leader, can move its writes on.
	orders := [][]*serverProc{{leader, f[0], f[1]}, {f[0], leader, f[1]}, {f[1], f[0], leader}, {leader, f[1], f[0]}, {f[0], f[1], leader}}
	noAttemptDeadline := len(orders) - 1
	load := &writeLoad{jobs: map[string]bool{}, grants: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for k, order := range orders {
		var opts []client.Option
		if k == noAttemptDeadline {
			opts = append(opts, client.WithAttemptTimeout(0))
		}
		cl := newClient(t, grpcAddrs(order...), opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(25 * time.Millisecond):
				}
				name := fmt.Sprintf("w%d-%d", k, i)
				cctx, ccancel := context.WithTimeout(ctx, 30*time.Second) // the CLI's default --timeout
				_, err := cl.Submit(cctx, client.JobSpec{Account: alpha, User: alphaUser, Name: name,
					Demand: map[string]float64{"cpu": 1}, Walltime: time.Minute, Command: []string{"true"}})
				if err == nil {
					load.acked(k, load.jobs, name)
					_, err = cl.Grants().CreateGrant(cctx, &longfairv1.CreateGrantRequest{Account: alpha, AmountMicroSu: 1, Note: name})
					if err == nil {
						load.acked(k, load.grants, name)
					}
				}
				ccancel()
				if err != nil && ctx.Err() == nil {
					load.failed(fmt.Errorf("writer %d, %s: %w", k, name, err))
				}
			}
		}()
	}
	// Tokens, which are never sent twice, are made through a follower
	// meanwhile: each exists at most once, and once if acknowledged.
	tokens := map[string]error{}
	var tokensMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := newClient(t, grpcAddrs(f[0], f[1], leader))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			desc := fmt.Sprintf("token-%d", i)
			cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := cl.ACL().CreateToken(cctx, &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_USER, User: alphaUser, Description: desc})
			ccancel()
			if ctx.Err() != nil {
				return
			}
			tokensMu.Lock()
			tokens[desc] = err
			tokensMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	})
	waitAcks := func(what string, after time.Time, n int) {
		t.Helper()
		testcluster.WaitFor(ctx, t, what, func() bool {
			for k := range orders {
				if load.ackedBy(k, after) < n {
					return false
				}
			}
			return true
		})
	}
	waitAcks("every writer to be acknowledged", time.Time{}, 5)

	pause(t, leader)
	stoppedAt := time.Now()
	t.Logf("stopped leader %s", leader.ID)
	leader.dead = true // for c.leader: the new one is among the others
	newLeader := c.leader(ctx)
	t.Logf("%s leads %v after the stop", newLeader.ID, time.Since(stoppedAt).Round(time.Millisecond))
	time.Sleep(time.Until(stoppedAt.Add(8 * time.Second))) // the fault lasts 8 s
	leader.Signal(syscall.SIGCONT)
	leader.dead = false
	resumedAt := time.Now()
	t.Logf("resumed %s", leader.ID)
	waitAcks("every writer to be acknowledged after the resume", resumedAt, 5)
	close(stop)
	wg.Wait()

	// The longest time without an acknowledgement while the leader was
	// stopped: with per-attempt deadlines, about an election plus one
	// attempt deadline; without, the whole stop.
	bound := 6 * time.Second
	all := load.gap(-1, stoppedAt, resumedAt)
	t.Logf("no write acknowledged for %v while the leader was stopped for 8s", all.Round(time.Millisecond))
	for k := range orders {
		g := load.gap(k, stoppedAt, resumedAt)
		t.Logf("writer %d (servers %s): longest time without an acknowledgement %v", k, strings.Join(serverIDs(orders[k]), ","), g.Round(time.Millisecond))
		if g > bound {
			t.Errorf("writer %d had no write acknowledged for %v while the leader was stopped; want under %v (a new leader was elected at once)", k, g, bound)
		}
	}
	for _, e := range load.errs {
		t.Logf("failed write (allowed; its outcome is checked below): %s", e)
	}

	// Nothing twice: every job and grant exists once, on every server
	// once the resumed one has caught up, acknowledged or not.
	cl := newClient(t, grpcAddrs(c.servers...), client.WithConsistentReads(true))
	jobNames, grantNotes := countWrites(ctx, t, cl, alpha)
	checkOnce(t, "job", jobNames, load.jobs)
	checkOnce(t, "grant", grantNotes, load.grants)
	t.Logf("%d jobs and %d grants acknowledged; %d jobs and %d grants exist", len(load.jobs), len(load.grants), len(jobNames), len(grantNotes))
	for _, s := range c.servers {
		replica := newClient(t, []string{s.GRPC}, client.WithConsistentReads(false))
		testcluster.WaitFor(ctx, t, s.ID+" to catch up", func() bool {
			j, g := countWrites(ctx, t, replica, alpha)
			return len(j) == len(jobNames) && len(g) == len(grantNotes)
		})
		j, g := countWrites(ctx, t, replica, alpha)
		checkOnce(t, s.ID+" job", j, load.jobs)
		checkOnce(t, s.ID+" grant", g, load.grants)
	}
	list, err := cl.ACL().ListTokens(ctx, &longfairv1.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]int{}
	for _, tok := range list.GetTokens() {
		made[tok.GetDescription()]++
	}
	unknown := 0
	for desc, err := range tokens {
		switch {
		case made[desc] > 1:
			t.Errorf("token %q exists %d times: a token creation was repeated", desc, made[desc])
		case err == nil && made[desc] != 1:
			t.Errorf("acknowledged token %q is missing", desc)
		case errors.Is(err, client.ErrOutcomeUnknown):
			unknown++
			t.Logf("token %q: %v (it exists %d times)", desc, err, made[desc])
		case err != nil:
			t.Logf("token %q failed: %v", desc, err)
		}
	}
	t.Logf("%d token creations, %d with an unknown outcome", len(tokens), unknown)
	c.verify(ctx)
}

func serverIDs(servers []*serverProc) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.ID)
	}
	return out
}

// countWrites counts the account's jobs by name and grants by note.
func countWrites(ctx context.Context, t testing.TB, cl *client.Client, account string) (jobs, grants map[string]int) {
	t.Helper()
	jobs, grants = map[string]int{}, map[string]int{}
	for j, err := range cl.AllJobs(ctx, &longfairv1.ListJobsRequest{Account: account}) {
		if err != nil {
			t.Fatalf("list jobs: %v", err)
		}
		jobs[j.GetName()]++
	}
	for g, err := range cl.AllGrants(ctx, account) {
		if err != nil {
			t.Fatalf("list grants: %v", err)
		}
		if g.GetNote() != "" {
			grants[g.GetNote()]++
		}
	}
	return jobs, grants
}

// checkOnce checks that nothing exists twice and every acknowledged write
// exists.
func checkOnce(t testing.TB, what string, have map[string]int, acked map[string]bool) {
	t.Helper()
	for name, n := range have {
		if n > 1 {
			t.Errorf("%s %q exists %d times: a retried write was applied twice", what, name, n)
		}
	}
	for name := range acked {
		if have[name] == 0 {
			t.Errorf("acknowledged %s %q is missing", what, name)
		}
	}
}
