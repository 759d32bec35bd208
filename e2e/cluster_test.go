package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// serverProc is a server process of the test, and whether the test
// killed it.
type serverProc struct {
	*testcluster.ServerProc
	dead bool
}

// cluster is servers and workers started by one test.
type cluster struct {
	t       testing.TB
	dir     string
	servers []*serverProc
	workers map[string]*testcluster.Proc

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
	next  int
}

// startCluster starts n servers forming a group with bootstrap-expect n
// and waits until they have a leader.
func startCluster(ctx context.Context, t testing.TB, n int, serverArgs ...string) *cluster {
	t.Helper()
	c := &cluster{t: t, dir: t.TempDir(), workers: map[string]*testcluster.Proc{}, conns: map[string]*grpc.ClientConn{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, conn := range c.conns {
			conn.Close()
		}
	})
	var join []string
	for i := range n {
		id := fmt.Sprintf("s%d", i+1)
		extra := []string{"--log-level", "info", "--bootstrap-expect", fmt.Sprint(n),
			// Workers (startWorker) fence within 3s; tasks of a lost
			// worker are rerun after 4s.
			"--worker-loss-timeout", "4s"}
		extra = append(extra, serverArgs...) // later flags win
		if len(join) > 0 {
			extra = append(extra, "--join", strings.Join(join, ","))
		}
		s := &serverProc{ServerProc: testcluster.StartServer(ctx, t, binary, c.dir, id, extra...)}
		c.servers = append(c.servers, s)
		join = append(join, s.Gossip)
	}
	c.leader(ctx)
	return c
}

// joinAddrs is every server's gossip address, for --join.
func (c *cluster) joinAddrs() string {
	var out []string
	for _, s := range c.servers {
		out = append(out, s.Gossip)
	}
	return strings.Join(out, ",")
}

// The test workers' fence timeout and kill grace: a worker that loses the
// leader has its tasks killed within their sum, which the servers'
// --worker-loss-timeout (4s) must exceed by a second.
const (
	workerFenceTimeout = 2 * time.Second
	workerKillGrace    = time.Second
)

// startWorker starts a worker process joining the cluster; args add to
// the defaults (cpu 4, mem 8G, kill grace 1s, fence timeout 2s: twice a
// leader failover here, so that a failover on a loaded machine does not
// fence every task; unconfined unless args say --unconfined=false, since
// test packages running at once reuse node ids).
func (c *cluster) startWorker(id string, args ...string) *testcluster.Proc {
	c.t.Helper()
	all := []string{"worker", "--node-id", id, "--join", c.joinAddrs(),
		"--gossip-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--work-dir", filepath.Join(c.dir, id), "--log-format", "json", "--kill-grace", workerKillGrace.String(), "--fence-timeout", workerFenceTimeout.String(),
		"--cpu", "4", "--mem", "8G", "--as-self", "--unconfined"}
	p := testcluster.StartProc(c.t, binary, c.dir, id, append(all, args...)...)
	c.workers[id] = p
	return p
}

func (c *cluster) conn(addr string) *grpc.ClientConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn, ok := c.conns[addr]; ok {
		return conn
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		c.t.Fatalf("dial %s: %v", addr, err)
	}
	c.conns[addr] = conn
	return conn
}

// live returns the servers not killed by the test.
func (c *cluster) live() []*serverProc {
	var out []*serverProc
	for _, s := range c.servers {
		if !s.dead {
			out = append(out, s)
		}
	}
	return out
}

// any returns a connection to a live server, a different one each call.
func (c *cluster) any() *grpc.ClientConn {
	live := c.live()
	c.mu.Lock()
	c.next++
	i := c.next
	c.mu.Unlock()
	return c.conn(live[i%len(live)].GRPC)
}

// do runs call against live servers until it succeeds, retrying while the
// cluster answers Unavailable (no leader yet, leadership moving).
func do[T any](ctx context.Context, c *cluster, call func(ctx context.Context, conn *grpc.ClientConn) (T, error)) (T, error) {
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := call(cctx, c.any())
		cancel()
		if err == nil || (status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded) || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// leader waits until the live servers agree on a leader and returns it.
func (c *cluster) leader(ctx context.Context) *serverProc {
	c.t.Helper()
	for {
		for _, s := range c.live() {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			p, err := longfairv1.NewOperatorClient(c.conn(s.GRPC)).GetLeader(cctx, &longfairv1.GetLeaderRequest{})
			cancel()
			if err != nil {
				continue
			}
			for _, l := range c.live() {
				if l.ID == p.GetId() {
					return l
				}
			}
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("no leader among the live servers: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// account creates an account with a user ("<name>-user") and a large grant.
func (c *cluster) account(ctx context.Context, name string) (account, user string) {
	c.t.Helper()
	user = name + "-user"
	_, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Account, error) {
		a, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name})
		if status.Code(err) == codes.AlreadyExists {
			err = nil
		}
		return a, err
	})
	must(c.t, err, "create account %s", name)
	_, err = do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.User, error) {
		u, err := longfairv1.NewUsersClient(conn).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{name}})
		if status.Code(err) == codes.AlreadyExists {
			err = nil
		}
		return u, err
	})
	must(c.t, err, "create user %s", user)
	_, err = do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Grant, error) {
		return longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: name + "-grant", Account: name, AmountMicroSu: 1e15})
	})
	must(c.t, err, "grant to %s", name)
	return name, user
}

// submit submits a job array of shell text, idempotently under rid.
func (c *cluster) submit(ctx context.Context, account, user, rid string, tasks int64, demand map[string]float64, walltime time.Duration, script string, opts ...func(*longfairv1.SubmitJobRequest)) uint64 {
	c.t.Helper()
	req := &longfairv1.SubmitJobRequest{
		Account: account, User: user, Name: rid, Demand: demand, Tasks: tasks,
		Walltime: durationpb.New(walltime), Command: []string{script}, RequestId: rid,
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.SubmitJobResponse, error) {
		return longfairv1.NewJobsClient(conn).SubmitJob(ctx, req)
	})
	must(c.t, err, "submit %s", rid)
	return resp.GetJob().GetId()
}

// nodes lists the nodes as the leader sees them.
func (c *cluster) nodes(ctx context.Context) map[string]*longfairv1.Node {
	c.t.Helper()
	resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.ListNodesResponse, error) {
		return longfairv1.NewOperatorClient(conn).ListNodes(consistent(ctx), &longfairv1.ListNodesRequest{})
	})
	must(c.t, err, "list nodes")
	out := map[string]*longfairv1.Node{}
	for _, n := range resp.GetNodes() {
		out[n.GetId()] = n
	}
	return out
}

// waitNodes waits until each named node is up (true) or down (false).
func (c *cluster) waitNodes(ctx context.Context, want map[string]bool) {
	c.t.Helper()
	testcluster.WaitFor(ctx, c.t, fmt.Sprintf("nodes %v", want), func() bool {
		nodes := c.nodes(ctx)
		for id, up := range want {
			n, ok := nodes[id]
			if up && (!ok || !n.GetUp()) || !up && ok && n.GetUp() {
				return false
			}
		}
		return true
	})
}

// job reads a job with a consistent read.
func (c *cluster) job(ctx context.Context, id uint64) *longfairv1.Job {
	c.t.Helper()
	j, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Job, error) {
		return longfairv1.NewJobsClient(conn).GetJob(consistent(ctx), &longfairv1.GetJobRequest{JobId: id})
	})
	must(c.t, err, "get job %d", id)
	return j
}

func ended(j *longfairv1.Job) bool {
	switch j.GetState() {
	case longfairv1.JobState_JOB_STATE_SUCCEEDED, longfairv1.JobState_JOB_STATE_FAILED, longfairv1.JobState_JOB_STATE_CANCELLED:
		return true
	}
	return false
}

// waitEnded waits until every job has ended and returns them.
func (c *cluster) waitEnded(ctx context.Context, ids ...uint64) []*longfairv1.Job {
	c.t.Helper()
	out := make([]*longfairv1.Job, len(ids))
	testcluster.WaitFor(ctx, c.t, fmt.Sprintf("jobs %v to end", ids), func() bool {
		for i, id := range ids {
			if out[i] = c.job(ctx, id); !ended(out[i]) {
				return false
			}
		}
		return true
	})
	return out
}

// tasks lists the latest attempt of every task of a job.
func (c *cluster) tasks(ctx context.Context, job uint64) []*longfairv1.Task {
	c.t.Helper()
	var out []*longfairv1.Task
	token := ""
	for {
		resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.ListTasksResponse, error) {
			return longfairv1.NewJobsClient(conn).ListTasks(consistent(ctx), &longfairv1.ListTasksRequest{JobId: job, PageToken: token, PageSize: 1000})
		})
		must(c.t, err, "list tasks of job %d", job)
		out = append(out, resp.GetTasks()...)
		if token = resp.GetNextPageToken(); token == "" {
			return out
		}
	}
}

// charges reads the journal's charge entries of an account, by charge id.
func (c *cluster) charges(ctx context.Context, account string) map[string][]*longfairv1.JournalEntry {
	c.t.Helper()
	out := map[string][]*longfairv1.JournalEntry{}
	after := uint64(0)
	for {
		resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.ListJournalResponse, error) {
			return longfairv1.NewLedgerClient(conn).ListJournal(consistent(ctx), &longfairv1.ListJournalRequest{Account: account, AfterSeq: after, PageSize: 1000})
		})
		must(c.t, err, "list journal of %s", account)
		for _, e := range resp.GetEntries() {
			if e.GetKind() == "charge" {
				out[e.GetId()] = append(out[e.GetId()], e)
			}
		}
		if after = resp.GetNextAfterSeq(); after == 0 {
			return out
		}
	}
}

// verify checks the ledger's journal and balances.
func (c *cluster) verify(ctx context.Context) {
	c.t.Helper()
	resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.VerifyResponse, error) {
		return longfairv1.NewLedgerClient(conn).Verify(consistent(ctx), &longfairv1.VerifyRequest{})
	})
	must(c.t, err, "verify the ledger")
	if !resp.GetOk() {
		c.t.Fatalf("ledger verify failed: %v", resp)
	}
}

// consistent asks for a read that reflects every acknowledged write.
func consistent(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, longfairv1.ConsistentReadMetadataKey, "true")
}

// chargedRuntime is the runtime a charge entry billed, from its detail.
func chargedRuntime(t testing.TB, e *longfairv1.JournalEntry) time.Duration {
	t.Helper()
	var d struct {
		Charge struct {
			Runtime time.Duration `json:"runtime"`
		} `json:"charge"`
	}
	if err := json.Unmarshal([]byte(e.GetDetail()), &d); err != nil {
		t.Fatalf("charge %s detail %q: %v", e.GetId(), e.GetDetail(), err)
	}
	return d.Charge.Runtime
}

func must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
