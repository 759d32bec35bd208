package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// grantMicroSU is enough service units that no test submission is refused
// for lack of funds.
const grantMicroSU = 1_000_000_000 * 1_000_000

// setupAccount creates an account, a user in it and a large grant, each
// through a different server, and returns the names.
func setupAccount(ctx context.Context, t testing.TB, c *testcluster.Cluster, name string) (account, user string) {
	t.Helper()
	servers := c.Running()
	account, user = name, name+"-user"
	err := testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := longfairv1.NewAccountsClient(c.Conn(servers[0])).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: account})
		return ignoreExisting(err)
	})
	if err != nil {
		t.Fatalf("create account through %s: %v", servers[0].NodeID(), err)
	}
	s1 := servers[1%len(servers)]
	err = testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := longfairv1.NewUsersClient(c.Conn(s1)).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{account}})
		return ignoreExisting(err)
	})
	if err != nil {
		t.Fatalf("create user through %s: %v", s1.NodeID(), err)
	}
	s2 := servers[2%len(servers)]
	err = testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := longfairv1.NewGrantsClient(c.Conn(s2)).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: name + "-grant", Account: account, AmountMicroSu: grantMicroSU})
		return err
	})
	if err != nil {
		t.Fatalf("create grant through %s: %v", s2.NodeID(), err)
	}
	return account, user
}

// ignoreExisting treats AlreadyExists as success: a retried creation that
// committed the first time.
func ignoreExisting(err error) error {
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	return err
}

func submitRequest(account, user, requestID string, tasks int64) *longfairv1.SubmitJobRequest {
	return &longfairv1.SubmitJobRequest{
		Account: account, User: user, Name: "test", Demand: map[string]float64{"cpu": 1, "mem": 1 << 30},
		Tasks: tasks, Walltime: durationpb.New(time.Hour), Command: []string{"/bin/true"}, RequestId: requestID,
	}
}

func consistent(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, longfairv1.ConsistentReadMetadataKey, "true")
}

func TestClusterFormsWithBootstrapExpectAndServesThroughAnyServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)

	leader := c.WaitLeader(ctx)
	peers, err := leader.Peers()
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 3 {
		t.Fatalf("raft configuration has %d servers, want 3: %+v", len(peers), peers)
	}
	for _, p := range peers {
		if p.Suffrage != "voter" || p.GRPCAddr == "" {
			t.Errorf("peer %+v: want a voter with a gossiped gRPC address", p)
		}
	}

	account, user := setupAccount(ctx, t, c, "physics")
	// Submit through every server, followers included; each submission is
	// acknowledged with a job id.
	ids := map[uint64]bool{}
	for i, s := range c.Running() {
		for k := range 3 {
			var resp *longfairv1.SubmitJobResponse
			err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
				resp, err = longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(ctx, submitRequest(account, user, fmt.Sprintf("r-%d-%d", i, k), 10))
				return err
			})
			if err != nil {
				t.Fatalf("submit through %s (leader %v): %v", s.NodeID(), s.IsLeader(), err)
			}
			if ids[resp.GetJob().GetId()] {
				t.Fatalf("job id %d handed out twice", resp.GetJob().GetId())
			}
			ids[resp.GetJob().GetId()] = true
		}
	}

	// A consistent read on a follower sees every acknowledged write at once.
	f := c.Follower(ctx)
	for id := range ids {
		var j *longfairv1.Job
		err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
			j, err = longfairv1.NewJobsClient(c.Conn(f)).GetJob(consistent(ctx), &longfairv1.GetJobRequest{JobId: id})
			return err
		})
		if err != nil {
			t.Fatalf("consistent read of job %d on follower %s: %v", id, f.NodeID(), err)
		}
		if j.GetAccount() != account || j.GetTasks() != 10 {
			t.Fatalf("job %d read back as %v", id, j)
		}
	}

	c.WaitConverged(ctx)
	// Every server answers a local read with every job.
	for _, s := range c.Running() {
		list, err := longfairv1.NewJobsClient(c.Conn(s)).ListJobs(ctx, &longfairv1.ListJobsRequest{Account: account})
		if err != nil {
			t.Fatalf("list jobs on %s: %v", s.NodeID(), err)
		}
		if len(list.GetJobs()) != len(ids) {
			t.Fatalf("%s lists %d jobs, want %d", s.NodeID(), len(list.GetJobs()), len(ids))
		}
	}
}

func TestRefusalsKeepTheirCodeThroughForwarding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	f := c.Follower(ctx)
	jobs := longfairv1.NewJobsClient(c.Conn(f))

	// Caught by request validation where it arrives.
	_, err := jobs.SubmitJob(ctx, &longfairv1.SubmitJobRequest{Account: "a", User: "u", Tasks: 0})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("submit with no tasks: %v, want InvalidArgument", err)
	}
	// Refused by the FSM on the leader, answered through the follower.
	_, err = jobs.SubmitJob(ctx, submitRequest("nosuch", "nobody", "", 1))
	if status.Code(err) != codes.NotFound || !strings.Contains(status.Convert(err).Message(), "nosuch") {
		t.Fatalf("submit to a missing account: %v, want NotFound naming it", err)
	}
	// A malformed consistency switch is named.
	_, err = jobs.GetJob(metadata.AppendToOutgoingContext(ctx, longfairv1.ConsistentReadMetadataKey, "maybe"), &longfairv1.GetJobRequest{JobId: 1})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), longfairv1.ConsistentReadMetadataKey) {
		t.Fatalf("bad consistency metadata: %v, want InvalidArgument naming the key", err)
	}
}

func TestWithoutLeaderWritesAreUnavailableWithAdvice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One server that waits for two more never forms a group.
	cfg := testcluster.Config(t.TempDir(), "lonely")
	cfg.BootstrapExpect = 3
	s, err := server.New(cfg, testcluster.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(testcluster.InsecureCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "a"})
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "no leader elected yet; retry in a few seconds") {
		t.Fatalf("write without a leader: %v", err)
	}
	// Local reads still work: there is just nothing there yet.
	_, err = longfairv1.NewAccountsClient(conn).GetAccount(ctx, &longfairv1.GetAccountRequest{Name: "a"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("local read without a leader: %v, want NotFound", err)
	}
	if _, err := longfairv1.NewOperatorClient(conn).GetLeader(ctx, &longfairv1.GetLeaderRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("GetLeader without a leader: %v, want Unavailable", err)
	}
}
