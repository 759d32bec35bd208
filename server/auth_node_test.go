package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/worker"
)

// createBoundToken creates a worker token bound to node and returns its
// secret and record.
func createBoundToken(ctx context.Context, c *testcluster.ACLCluster, node string) (string, *longfairv1.Token) {
	c.TB().Helper()
	return c.CreateTokenFrom(ctx, &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_WORKER, Node: node, Description: "worker " + node})
}

// helloAs opens a worker stream to the leader with secret, says hello as
// node (a fresh worker holding nothing) and returns the leader's first
// answer: a welcome, or the refusal that ended the stream.
func helloAs(ctx context.Context, c *testcluster.ACLCluster, secret, node string) (*longfairv1.LeaderMessage, error) {
	c.TB().Helper()
	var first *longfairv1.LeaderMessage
	err := testcluster.RetryUnavailable(ctx, c.TB(), func() error {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := longfairv1.NewWorkersClient(c.Conn(c.WaitLeader(ctx))).Connect(testcluster.As(sctx, secret))
		if err != nil {
			return err
		}
		ad := &longfairv1.WorkerAdvert{Version: 1, Role: server.RoleWorker, NodeId: node, Resources: map[string]float64{"cpu": 1}, Address: "127.0.0.1:1"}
		hello := &longfairv1.WorkerHello{Advert: ad, Session: "hello-" + node, Fresh: true}
		if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
			return err
		}
		for {
			m, err := stream.Recv()
			if err != nil {
				return err
			}
			if m.GetHeartbeat() == nil {
				first = m
				return nil
			}
		}
	})
	return first, err
}

// TestWorkerTokenBoundToANode: a worker token bound to node A cannot hold
// node B's stream — the hello is refused with PermissionDenied and the
// stream of B's real worker, its running attempt and every server's state
// stay as they were — while as A it works, and unbound worker tokens and
// admin tokens connect as any node as before. Only worker tokens can be
// bound.
func TestWorkerTokenBoundToANode(t *testing.T) {
	c := testcluster.NewACL(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	leader := c.WaitLeader(ctx)
	lc := c.Conn(leader)
	if _, err := longfairv1.NewAccountsClient(lc).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewGrantsClient(lc).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-phys", Account: "phys", AmountMicroSu: 1e12}); err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewUsersClient(lc).CreateUser(admin, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys"}}); err != nil {
		t.Fatal(err)
	}

	secretA, tokA := createBoundToken(ctx, c, "wa")
	secretB, tokB := createBoundToken(ctx, c, "wb")
	unbound, tokAny := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)
	if tokA.GetNode() != "wa" || tokB.GetNode() != "wb" || tokAny.GetNode() != "" {
		t.Fatalf("created tokens are bound to %q, %q, %q; want wa, wb and none", tokA.GetNode(), tokB.GetNode(), tokAny.GetNode())
	}
	list, err := longfairv1.NewACLClient(lc).ListTokens(admin, &longfairv1.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, k := range list.GetTokens() {
		listed[k.GetId()] = k.GetNode()
	}
	if listed[tokA.GetId()] != "wa" || listed[tokB.GetId()] != "wb" || listed[tokAny.GetId()] != "" {
		t.Fatalf("the listing shows nodes %v", listed)
	}

	// Node wb's own worker, with the token bound to wb, runs a long task.
	testcluster.Worker(t, c.Cluster, "wb", func(w *worker.Config) { w.Token = secretB })
	testcluster.WaitNodesUp(ctx, t, leader, "wb")
	job, err := longfairv1.NewJobsClient(lc).SubmitJob(admin, testcluster.ShellJob("phys", "ann", "long", 1, map[string]float64{"cpu": 1}, time.Hour, "sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	jobID := job.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "the task to run on wb", func() bool {
		ts := testcluster.AllTasks(admin, t, c.Cluster, jobID)
		return len(ts) == 1 && ts[0].GetState() == longfairv1.TaskState_TASK_STATE_RUNNING && ts[0].GetNode() == "wb"
	})
	leader = c.WaitLeader(ctx)
	stream := leader.WorkerStream("wb")
	if stream == nil {
		t.Fatal("the leader holds no stream of wb")
	}
	c.WaitApplied(ctx)
	before := boundStateOf(t, leader, jobID)

	// The token of wa, stolen, says hello as wb.
	_, err = helloAs(ctx, c, secretA, "wb")
	wantStatus(t, "a token bound to wa connecting as wb", err, codes.PermissionDenied)
	msg := status.Convert(err).Message()
	for _, words := range []string{tokA.GetId(), "node wa", "node wb", "--node-id wa", "--node wb"} {
		if !strings.Contains(msg, words) {
			t.Errorf("the refusal %q does not say %q", msg, words)
		}
	}
	if leader.WorkerStream("wb") != stream {
		t.Fatal("the refused stream replaced wb's own")
	}
	c.WaitApplied(ctx)
	for _, s := range c.Running() {
		if got := boundStateOf(t, s, jobID); got != before {
			t.Fatalf("the refused hello changed the state on %s:\nbefore %s\nafter  %s", s.NodeID(), before, got)
		}
	}
	waitSameDigest(ctx, t, c)

	// As its own node the bound token works; unbound worker tokens and
	// admin tokens connect as any node, as they did before binding.
	for _, hello := range []struct{ who, secret, node string }{
		{"the token bound to wa", secretA, "wa"},
		{"an unbound worker token", unbound, "wc"},
		{"an admin token", testcluster.BootstrapSecret, "wd"},
	} {
		m, err := helloAs(ctx, c, hello.secret, hello.node)
		if err != nil || m.GetWelcome() == nil {
			t.Fatalf("%s connecting as %s: %v, %v; want a welcome", hello.who, hello.node, m, err)
		}
	}
	if !strings.Contains(c.Logs.String(), "its token is bound to another node") {
		t.Error("the refusal is not in the leader's log")
	}

	// Only worker tokens can be bound.
	before = boundStateOf(t, c.WaitLeader(ctx), jobID)
	for _, role := range []longfairv1.TokenRole{longfairv1.TokenRole_TOKEN_ROLE_USER, longfairv1.TokenRole_TOKEN_ROLE_ADMIN} {
		for _, s := range c.Running() {
			_, err := longfairv1.NewACLClient(c.Conn(s)).CreateToken(admin, &longfairv1.CreateTokenRequest{Role: role, User: "ann", Node: "wa"})
			wantStatus(t, fmt.Sprintf("a %v token bound to a node, through %s", role, s.NodeID()), err, codes.InvalidArgument)
			if !strings.Contains(status.Convert(err).Message(), "only WORKER tokens") {
				t.Errorf("the refusal does not say only worker tokens are bound: %v", err)
			}
		}
	}
	c.WaitApplied(ctx)
	for _, s := range c.Running() {
		if got := boundStateOf(t, s, jobID); got != before {
			t.Fatalf("a refused CreateToken changed the state on %s", s.NodeID())
		}
	}
}

// boundStateOf is what an impersonating worker could change, read from
// server s's replica: accounts, users, grants, jobs, the journal and the
// tokens (testcluster.Fingerprint), the nodes, and the attempts of job.
func boundStateOf(t *testing.T, s *server.Server, job uint64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(testcluster.Fingerprint(t, s))
	for _, n := range s.FSM().Nodes() {
		fmt.Fprintf(&b, "node %s up=%v\n", n.ID, n.Up)
	}
	tasks, _, err := s.FSM().Tasks(job, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tasks {
		fmt.Fprintf(&b, "task %d attempt %d %v on %s\n", ti.Task, ti.Attempt, ti.State, ti.Node)
	}
	return b.String()
}

// waitSameDigest waits until every running server's state has the same
// digest: they applied the same entries to the same state.
func waitSameDigest(ctx context.Context, t *testing.T, c *testcluster.ACLCluster) {
	t.Helper()
	testcluster.WaitFor(ctx, t, "every server to hold the same state", func() bool {
		var first [32]byte
		for i, s := range c.Running() {
			d, err := s.FSM().Digest()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = d
			} else if d != first {
				return false
			}
		}
		return true
	})
}
