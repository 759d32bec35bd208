package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// ackedWrites records what the cluster acknowledged, to check later that
// none of it was lost.
type ackedWrites struct {
	account, user string
	jobs          map[uint64]string // job id → request id
	grants        []string
}

// writeSome submits jobs and creates grants through every running server
// in turn and records what was acknowledged.
func writeSome(ctx context.Context, t testing.TB, c *testcluster.Cluster, w *ackedWrites, n int, tag string) {
	t.Helper()
	servers := c.Running()
	for k := range n {
		s := servers[k%len(servers)]
		rid := fmt.Sprintf("%s-%d", tag, k)
		var resp *longfairv1.SubmitJobResponse
		err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
			resp, err = longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(ctx, submitRequest(w.account, w.user, rid, int64(1+k%5)))
			return err
		})
		if err != nil {
			t.Fatalf("submit %s through %s: %v", rid, s.NodeID(), err)
		}
		w.jobs[resp.GetJob().GetId()] = rid
		gid := "g-" + rid
		err = testcluster.RetryUnavailable(ctx, t, func() error {
			_, err := longfairv1.NewGrantsClient(c.Conn(s)).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: gid, Account: w.account, AmountMicroSu: 1_000_000})
			return err
		})
		if err != nil {
			t.Fatalf("grant %s through %s: %v", gid, s.NodeID(), err)
		}
		w.grants = append(w.grants, gid)
	}
}

// submitUntilAccepted retries one submission (same request id, so a retry
// never makes a second job) until a server accepts it, and returns when.
func submitUntilAccepted(ctx context.Context, t testing.TB, c *testcluster.Cluster, s *server.Server, w *ackedWrites, rid string) {
	t.Helper()
	for {
		resp, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(ctx, submitRequest(w.account, w.user, rid, 1))
		if err == nil {
			w.jobs[resp.GetJob().GetId()] = rid
			return
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("submit %s through %s during failover: %v (only Unavailable is expected)", rid, s.NodeID(), err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no write accepted through %s before the deadline; last error: %v", s.NodeID(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkAcked reads every acknowledged job and grant back through s with a
// consistent read.
func checkAcked(ctx context.Context, t testing.TB, c *testcluster.Cluster, s *server.Server, w *ackedWrites) {
	t.Helper()
	jobs := longfairv1.NewJobsClient(c.Conn(s))
	for id, rid := range w.jobs {
		var j *longfairv1.Job
		err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
			j, err = jobs.GetJob(consistent(ctx), &longfairv1.GetJobRequest{JobId: id})
			return err
		})
		if err != nil {
			t.Fatalf("acknowledged job %d (%s) on %s: %v", id, rid, s.NodeID(), err)
		}
		if j.GetAccount() != w.account {
			t.Fatalf("job %d is %v", id, j)
		}
	}
	var list *longfairv1.ListJobsResponse
	err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
		list, err = longfairv1.NewJobsClient(c.Conn(s)).ListJobs(consistent(ctx), &longfairv1.ListJobsRequest{Account: w.account, PageSize: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetJobs()) != len(w.jobs) {
		t.Fatalf("%s lists %d jobs, %d were acknowledged: a retried submission ran twice or one was lost", s.NodeID(), len(list.GetJobs()), len(w.jobs))
	}
	have := map[string]bool{}
	var grants *longfairv1.ListGrantsResponse
	err = testcluster.RetryUnavailable(ctx, t, func() (err error) {
		grants, err = longfairv1.NewGrantsClient(c.Conn(s)).ListGrants(consistent(ctx), &longfairv1.ListGrantsRequest{Account: w.account, PageSize: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grants.GetGrants() {
		have[g.GetId()] = true
	}
	for _, g := range w.grants {
		if !have[g] {
			t.Fatalf("acknowledged grant %s missing on %s", g, s.NodeID())
		}
	}
}

func TestLeaderShutdownFailsOverWithoutLosingAcknowledgedWrites(t *testing.T) {
	forEachLogStore(t, leaderShutdownFailsOverWithoutLosingAcknowledgedWrites)
}

// forEachLogStore runs test once for each Raft log store a server can keep
// its log in, with the stores' tune applied to every server.
func forEachLogStore(t *testing.T, test func(t *testing.T, store func(*server.Config))) {
	for _, kind := range server.LogStores() {
		t.Run(kind, func(t *testing.T) { test(t, func(cfg *server.Config) { cfg.Raft.LogStore = kind }) })
	}
}

func leaderShutdownFailsOverWithoutLosingAcknowledgedWrites(t *testing.T, store func(*server.Config)) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 3, store)
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "chem")
	writeSome(ctx, t, c, w, 12, "before")

	old := c.WaitLeader(ctx)
	oldIdx := c.Index(old)
	killed := time.Now()
	c.Stop(oldIdx)
	survivor := c.Running()[0]
	fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
	submitUntilAccepted(fctx, t, c, survivor, w, "during")
	fcancel()
	t.Logf("first write committed %v after the leader (%s) stopped", time.Since(killed).Round(time.Millisecond), old.NodeID())

	newLeader := c.WaitLeader(ctx)
	if newLeader.NodeID() == old.NodeID() {
		t.Fatal("the stopped server still leads")
	}
	writeSome(ctx, t, c, w, 6, "after")
	for _, s := range c.Running() {
		checkAcked(ctx, t, c, s, w)
	}

	// The old leader comes back from its data dir, catches up, and holds
	// exactly the state the others hold.
	c.Start(oldIdx)
	digest := c.WaitConverged(ctx)
	checkAcked(ctx, t, c, c.Server(oldIdx), w)
	if d, _ := c.Server(oldIdx).FSM().Digest(); d != digest {
		t.Fatal("restarted server's digest differs after convergence")
	}
}
