package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// editGrantAmounts multiplies every grant's amount in a stopped server's
// fsm.db by factor, as someone editing the file with bbolt would: a
// well-formed file whose state no longer matches the log.
func editGrantAmounts(t *testing.T, dataDir string, factor int64) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dataDir, "fsm", fsm.FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("grants"))
		edits := map[string][]byte{}
		err := b.ForEach(func(k, v []byte) error {
			var rec map[string]any
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			rec["amount"] = int64(rec["amount"].(float64)) * factor
			out, err := json.Marshal(rec)
			edits[string(k)] = out
			return err
		})
		if err != nil {
			return err
		}
		if len(edits) == 0 {
			t.Fatal("no grant to edit")
		}
		for k, v := range edits {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// resealState has the state file in dataDir vouched for by a shutdown
// record, as though the server had stopped cleanly with that state: a
// state changed by a bug before the record was written, which the
// start-up check cannot tell from a good one. (A file without a record is
// not trusted at all: the server rebuilds it from the log.) Opening the
// FSM takes the old record; closing it writes one for what it holds.
func resealState(t *testing.T, dataDir string) {
	t.Helper()
	f, err := fsm.Open(fsm.Options{Dir: filepath.Join(dataDir, "fsm")})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitGossipSees waits until every running server has s in its gossip
// view, so that the leader can ask it for its digest.
func waitGossipSees(ctx context.Context, t *testing.T, c *testcluster.Cluster, s *server.Server) {
	t.Helper()
	for _, o := range c.Running() {
		for {
			if o.SeesServer(s.NodeID()) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s does not see %s in the gossip pool", o.NodeID(), s.NodeID())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func withStateCheckEvery(d time.Duration) func(*server.Config) {
	return func(c *server.Config) { c.StateCheck.Interval = server.Duration(d) }
}

// TestEditedStateIsFoundAndRefused edits a grant's amount in one stopped
// follower's fsm.db and restarts it. At the next state check it must stop
// serving reads and say why, the others must keep serving the true amount,
// writes through it must still reach the leader, and the operator's
// verify-state must name it as the one that diverged.
func TestEditedStateIsFoundAndRefused(t *testing.T) {
	// After a clean shutdown the start-up check finds the edit (the file's
	// digest is not the one recorded at shutdown); when the record vouches
	// for the edited file (resealed), the periodic check finds it. (After
	// a crash there is no record and the file is rebuilt from the log:
	// TestRestartAfterACrashRebuildsTheStateFromTheLog.)
	for _, resealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean-shutdown", true: "resealed"}[resealed], func(t *testing.T) {
			testEditedState(t, resealed)
		})
	}
}

func testEditedState(t *testing.T, resealed bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 3, func(cfg *server.Config) {
		withStateCheckEvery(100 * time.Millisecond)(cfg)
		cfg.HTTPAddr = "127.0.0.1:0" // for /metrics
	})
	leader := c.WaitLeader(ctx)
	lconn := c.Conn(leader)
	if _, err := longfairv1.NewAccountsClient(lconn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"}); err != nil {
		t.Fatal(err)
	}
	const amount = 5_000_000
	if _, err := longfairv1.NewGrantsClient(lconn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "g1", Account: "astro", AmountMicroSu: amount}); err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(ctx)

	victim := c.Follower(ctx)
	vi := c.Index(victim)
	c.Stop(vi)
	editGrantAmounts(t, c.ServerConfig(vi).DataDir, 1000)
	if resealed {
		resealState(t, c.ServerConfig(vi).DataDir)
	}
	victim = c.Start(vi)
	// The edited server stops serving reads, saying why.
	vconn := c.Conn(victim)
	var readErr error
	var served []*longfairv1.Grant
	writes := 0
	found := time.Now().Add(20 * time.Second)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := longfairv1.NewGrantsClient(vconn).ListGrants(rctx, &longfairv1.ListGrantsRequest{Account: "astro"})
		rcancel()
		if err == nil {
			served = resp.GetGrants()
		}
		if err != nil && strings.Contains(status.Convert(err).Message(), "no longer serves reads") {
			readErr = err
			break
		}
		if time.Now().After(found) {
			t.Fatalf("the edited server still serves reads after 20s (grants %v; last answer %v): its edited state was never found", served, err)
		}
		// The group keeps being written to, so periodic checks run (a
		// quiet group's state does not change, and is not checked).
		writes++
		if err := testcluster.RetryUnavailable(ctx, t, func() error {
			_, err := longfairv1.NewAccountsClient(c.Conn(c.WaitLeader(ctx))).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: fmt.Sprintf("acct-%d", writes)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	msg := status.Convert(readErr).Message()
	if status.Code(readErr) != codes.Unavailable || !strings.Contains(msg, "index") || !strings.Contains(msg, "restore") || !strings.Contains(msg, "this server's state") {
		t.Errorf("the refusal is %v; want Unavailable naming the index and saying to restore the server", readErr)
	}
	if err := victim.Ready(); err == nil || !strings.Contains(err.Error(), "no longer serves reads") {
		t.Errorf("readiness of the edited server: %v; want it not ready because its state diverged", err)
	}
	if v := mustSample(t, scrapeMetrics(t, victim), "longfair_fsm_diverged"); v != 1 {
		t.Errorf("longfair_fsm_diverged on the edited server = %v, want 1", v)
	}

	// The others serve the true amount and are ready.
	for _, s := range c.Running() {
		if s == victim {
			continue
		}
		resp, err := longfairv1.NewGrantsClient(c.Conn(s)).ListGrants(ctx, &longfairv1.ListGrantsRequest{Account: "astro"})
		if err != nil {
			t.Fatalf("%s refuses reads: %v", s.NodeID(), err)
		}
		if g := resp.GetGrants(); len(g) != 1 || g[0].GetAmountMicroSu() != amount {
			t.Errorf("%s serves grants %v; want the one of %d", s.NodeID(), g, amount)
		}
		if err := s.Ready(); err != nil {
			t.Errorf("%s is not ready: %v", s.NodeID(), err)
		}
	}

	// A write sent through the edited server is forwarded to the leader.
	if err := testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := longfairv1.NewGrantsClient(vconn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "g3", Account: "astro", AmountMicroSu: 7})
		return err
	}); err != nil {
		t.Errorf("a write through the edited server: %v", err)
	}

	// The operator's check names it, once every server knows where it is.
	waitGossipSees(ctx, t, c, victim)
	var vs *longfairv1.VerifyStateResponse
	if err := testcluster.RetryUnavailable(ctx, t, func() error {
		var err error
		vs, err = longfairv1.NewOperatorClient(vconn).VerifyState(ctx, &longfairv1.VerifyStateRequest{})
		return err
	}); err != nil {
		t.Fatalf("verify-state: %v", err)
	}
	if vs.GetIndex() == 0 || vs.GetMajorityDigest() == "" {
		t.Errorf("verify-state has no checkpoint index or majority: %v", vs)
	}
	for _, row := range vs.GetServers() {
		want := "OK"
		if row.GetId() == victim.NodeID() {
			want = "DIVERGED"
		}
		if row.GetStatus() != want {
			t.Errorf("verify-state says %s is %s (%s); want %s", row.GetId(), row.GetStatus(), row.GetDetail(), want)
		}
	}
	if len(vs.GetServers()) != 3 {
		t.Errorf("verify-state reports %d servers, want 3", len(vs.GetServers()))
	}
}

// TestDamagedLeaderIsJudgedByMostServers edits the state of the server
// that then leads. Its followers agree with each other, not with it:
// verify-state must name the leader as the one that diverged, leave the
// followers serving, and the leader must hand leadership over.
func TestDamagedLeaderIsJudgedByMostServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// No periodic checks: verify-state alone must find it.
	c := testcluster.NewWith(t, 3, withStateCheckEvery(0))
	leader := c.WaitLeader(ctx)
	if _, err := longfairv1.NewAccountsClient(c.Conn(leader)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"}); err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewGrantsClient(c.Conn(leader)).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "g1", Account: "astro", AmountMicroSu: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(ctx)
	victim := c.Follower(ctx)
	vi := c.Index(victim)
	c.Stop(vi)
	editGrantAmounts(t, c.ServerConfig(vi).DataDir, 1000)
	// With a shutdown record that vouches for the edit, the victim cannot
	// find it itself at start-up: the others must find it.
	resealState(t, c.ServerConfig(vi).DataDir)
	victim = c.Start(vi)
	if d := victim.FSM().Diverged(); d != nil {
		t.Fatalf("the victim knows it diverged before any comparison: %v", d)
	}

	// Once it has caught up, it is made the leader.
	for {
		cur := c.WaitLeader(ctx)
		if cur == victim && victim.Leading() {
			break
		}
		if cur != victim && victim.Raft().AppliedIndex() >= cur.Raft().AppliedIndex() {
			_ = cur.Raft().LeadershipTransferToServer(raft.ServerID(victim.NodeID()), raft.ServerAddress(victim.RaftAddr())).Error()
		}
		if ctx.Err() != nil {
			t.Fatalf("could not make %s the leader", victim.NodeID())
		}
		time.Sleep(50 * time.Millisecond)
	}

	waitGossipSees(ctx, t, c, victim)
	var followers []*server.Server
	for _, s := range c.Running() {
		if s != victim {
			followers = append(followers, s)
		}
	}
	var vs *longfairv1.VerifyStateResponse
	if err := testcluster.RetryUnavailable(ctx, t, func() error {
		var err error
		vs, err = longfairv1.NewOperatorClient(c.Conn(followers[0])).VerifyState(ctx, &longfairv1.VerifyStateRequest{})
		return err
	}); err != nil {
		t.Fatalf("verify-state: %v", err)
	}
	for _, row := range vs.GetServers() {
		want := "OK"
		if row.GetId() == victim.NodeID() {
			want = "DIVERGED"
		}
		if row.GetStatus() != want {
			t.Errorf("verify-state says %s is %s (%s); want %s", row.GetId(), row.GetStatus(), row.GetDetail(), want)
		}
	}

	// The damaged leader marks itself and hands leadership over; the
	// followers, which agree with each other, keep serving.
	for victim.IsLeader() || victim.FSM().Diverged() == nil {
		if ctx.Err() != nil {
			t.Fatalf("the damaged server still leads (%v) or does not know it diverged (%v)", victim.IsLeader(), victim.FSM().Diverged())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := longfairv1.NewGrantsClient(c.Conn(victim)).ListGrants(ctx, &longfairv1.ListGrantsRequest{Account: "astro"}); status.Code(err) != codes.Unavailable {
		t.Errorf("a read on the damaged server: %v; want Unavailable", err)
	}
	for _, s := range followers {
		if d := s.FSM().Diverged(); d != nil {
			t.Errorf("%s agrees with most servers but marked itself diverged: %v", s.NodeID(), d)
		}
		resp, err := longfairv1.NewGrantsClient(c.Conn(s)).ListGrants(ctx, &longfairv1.ListGrantsRequest{Account: "astro"})
		if err != nil || len(resp.GetGrants()) != 1 || resp.GetGrants()[0].GetAmountMicroSu() != 5_000_000 {
			t.Errorf("%s serves %v, %v; want the grant of 5000000", s.NodeID(), resp.GetGrants(), err)
		}
	}
	c.WaitLeader(ctx)
}

// With the ACL on, the leader's periodic state check must still reach the
// other servers' digests (it holds no token of its own): were it to commit
// its own digest unasked, a damaged leader would mark every healthy
// follower diverged. A server therefore answers GetStateDigest without a
// token, and does so for a checkpoint the periodic round committed.
func TestStateDigestsAreAskedForWithTheACLOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewACL(t, 3, withStateCheckEvery(200*time.Millisecond))
	leader := c.WaitLeader(ctx)
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	if _, err := longfairv1.NewAccountsClient(c.Conn(leader)).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: "astro"}); err != nil {
		t.Fatal(err)
	}
	var follower *server.Server
	for _, s := range c.Running() {
		if s != leader {
			follower = s
		}
	}
	for follower.FSM().LatestCheckpoint() == 0 {
		if ctx.Err() != nil {
			t.Fatal("no periodic checkpoint reached the follower")
		}
		time.Sleep(20 * time.Millisecond)
	}
	index := follower.FSM().LatestCheckpoint()
	got, err := longfairv1.NewOperatorClient(c.Conn(follower)).GetStateDigest(ctx, &longfairv1.GetStateDigestRequest{Index: index})
	if err != nil {
		t.Fatalf("GetStateDigest without a token on an ACL cluster: %v", err)
	}
	if got.GetDigest() == "" {
		t.Fatalf("GetStateDigest of checkpoint %d gave no digest: %v", index, got)
	}
	for _, s := range c.Running() {
		if d := s.FSM().Diverged(); d != nil {
			t.Errorf("%s marked itself diverged on a healthy ACL cluster: %v", s.NodeID(), d)
		}
	}
}
