package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/raftls"
	"github.com/longfair/longfair/ops/tlstest"
	"github.com/longfair/longfair/worker"
)

// tlsConn dials addr with the given credentials.
func tlsConn(t testing.TB, addr string, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func clientCreds(t testing.TB, cfg ops.TLSConfig) credentials.TransportCredentials {
	t.Helper()
	creds, err := cfg.ClientCredentials()
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// refused checks that a call over conn never reaches a handler: the
// connection itself is refused.
func refused(t *testing.T, what string, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := longfairv1.NewOperatorClient(conn).GetLeader(testcluster.As(ctx, testcluster.BootstrapSecret), &longfairv1.GetLeaderRequest{})
	if err == nil {
		t.Fatalf("%s: the call went through", what)
	}
	if err := healthCheck(ctx, conn); err == nil {
		t.Fatalf("%s: the health check went through", what)
	}
}

// TestTLSClusterRefusesPlaintext runs a three-server group with mutual
// TLS on gRPC and Raft, an encrypted gossip pool and tokens, and a worker
// that joins with a worker token and its own certificate. It checks that
// the group works through every path (Raft, forwarding, the worker's
// stream, task output read from the worker) and that plaintext, a client
// without a certificate, one with a certificate of another CA, a plain
// Raft peer and a gossip member without the key are all refused.
func TestTLSClusterRefusesPlaintext(t *testing.T) {
	pki := tlstest.New(t, "cluster")
	gossipKey := []byte("0123456789abcdef0123456789abcdef")
	c := testcluster.NewACL(t, 3, func(cfg *server.Config) {
		cfg.TLS = pki.Issue(cfg.NodeID)
		cfg.GossipKey = gossipKey
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Connections of the test's own client: mutual TLS with a client
	// certificate of the cluster's CA. c.conn uses them from now on.
	admin := pki.Issue("admin-client")
	for _, s := range c.Running() {
		c.UseConn(s.GRPCAddr(), tlsConn(t, s.GRPCAddr(), clientCreds(t, admin)))
	}
	leader := c.WaitLeader(ctx)
	follower := c.Follower(ctx)
	if tls, verifies := leader.Secured(); !tls || !verifies {
		t.Fatal("the servers do not run mutual TLS")
	}

	// Writes through a follower are forwarded to the leader over TLS,
	// and replicated over Raft on TLS.
	fc := c.Conn(follower)
	adm := testcluster.As(ctx, testcluster.BootstrapSecret)
	if _, err := longfairv1.NewAccountsClient(fc).CreateAccount(adm, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
		t.Fatalf("create an account through a follower: %v", err)
	}
	if _, err := longfairv1.NewUsersClient(fc).CreateUser(adm, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewGrantsClient(fc).CreateGrant(adm, &longfairv1.CreateGrantRequest{Id: "g1", Account: "phys", AmountMicroSu: 1e12}); err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(ctx)

	addr := leader.GRPCAddr()
	refused(t, "plaintext", tlsConn(t, addr, insecure.NewCredentials()))
	noCert := ops.TLSConfig{CAFile: pki.CAFile()}
	refused(t, "TLS without a client certificate", tlsConn(t, addr, clientCreds(t, noCert)))
	other := tlstest.New(t, "other").Issue("intruder")
	other.CAFile = pki.CAFile() // it trusts the servers, but they do not trust it
	refused(t, "a certificate of another CA", tlsConn(t, addr, clientCreds(t, other)))

	// A plain-TCP Raft peer gets nowhere.
	plain, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var vote raft.RequestVoteResponse
	err = plain.RequestVote(raft.ServerID(leader.NodeID()), raft.ServerAddress(leader.RaftAddr()),
		&raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ID: []byte("intruder"), Addr: []byte(plain.LocalAddr())}, Term: 1 << 40}, &vote)
	if err == nil {
		t.Fatalf("a plaintext Raft peer got a vote answer: %+v", vote)
	}
	if leader.IsLeader() && leader.Raft().CurrentTerm() >= 1<<40 {
		t.Fatal("the plaintext vote request reached Raft")
	}

	// A gossip member without the key cannot join the pool.
	self := server.MemberMeta{Version: server.MemberMetaVersion, Role: server.RoleServer, ID: "keyless"}
	n, joinErr, err := server.JoinGossipAs(testcluster.Config(t.TempDir(), "keyless"), self, c.Log(), []string{leader.GossipAddr()})
	if err != nil {
		t.Fatal(err)
	}
	if joinErr == nil || n > 0 {
		t.Fatalf("a gossip member without the key joined (%d contacted, %v)", n, joinErr)
	}

	// A worker with a worker token and its own certificate runs a task,
	// and its output is read back through a follower, which dials the
	// worker over mutual TLS.
	workerSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)
	ag := testcluster.Worker(t, c.Cluster, "w1", func(w *worker.Config) {
		w.TLS = pki.Issue("w1")
		w.Token = workerSecret
		w.GossipKey = gossipKey
	})
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	job, err := longfairv1.NewJobsClient(c.Conn(leader)).SubmitJob(adm, testcluster.ShellJob("phys", "ann", "hello", 1, map[string]float64{"cpu": 1}, time.Minute, "echo hello over tls"))
	if err != nil {
		t.Fatal(err)
	}
	var j *longfairv1.Job
	testcluster.WaitFor(ctx, t, "the job to end", func() bool {
		j, err = longfairv1.NewJobsClient(c.Conn(leader)).GetJob(adm, &longfairv1.GetJobRequest{JobId: job.GetJob().GetId()})
		return err == nil && j.GetEndedAt() != nil
	})
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the job ended %v", j.GetState())
	}
	out, err := readOutput(adm, c.Conn(follower), job.GetJob().GetId())
	if err != nil || out != "hello over tls\n" {
		t.Fatalf("task output through a follower: %q, %v", out, err)
	}
	// The worker's task output service refuses plaintext.
	refusedOutput(t, tlsConn(t, ag.GRPCAddr(), insecure.NewCredentials()), job.GetJob().GetId())
	refusedOutput(t, tlsConn(t, ag.GRPCAddr(), clientCreds(t, noCert)), job.GetJob().GetId())

	if logs := c.Logs.String(); strings.Contains(logs, workerSecret) || strings.Contains(logs, testcluster.BootstrapSecret) {
		t.Fatal("a token secret is in the server log")
	}
}

// readOutput reads the stdout of task 0 of a job; ctx carries the token.
func readOutput(ctx context.Context, conn *grpc.ClientConn, job uint64) (string, error) {
	s, err := longfairv1.NewWorkersClient(conn).ReadTaskOutput(ctx, &longfairv1.ReadTaskOutputRequest{JobId: job})
	if err != nil {
		return "", err
	}
	var out []byte
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return string(out), nil
		}
		if err != nil {
			return string(out), err
		}
		out = append(out, chunk.GetData()...)
	}
}

func refusedOutput(t *testing.T, conn *grpc.ClientConn, job uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := longfairv1.NewTaskOutputClient(conn).ReadTaskOutput(ctx, &longfairv1.ReadTaskOutputRequest{JobId: job, Attempt: 1})
	if err == nil {
		_, err = s.Recv()
	}
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("the worker served task output to a caller without a certificate (%v)", err)
	}
}

// TestTLSConfigValidation: a server with TLS needs its certificate and
// key; files that do not load are refused with the file named.
func TestTLSConfigValidation(t *testing.T) {
	pki := tlstest.New(t, "v")
	good := pki.Issue("s1")
	base := testcluster.Config(t.TempDir(), "s1")
	for _, c := range []struct {
		name  string
		tls   ops.TLSConfig
		words string
	}{
		{"only a CA", ops.TLSConfig{CAFile: good.CAFile}, "certificate and key"},
		{"cert without key", ops.TLSConfig{CertFile: good.CertFile}, "--tls-key"},
		{"key of another certificate", ops.TLSConfig{CertFile: good.CertFile, KeyFile: pki.Issue("s2").KeyFile}, "does not match"},
		{"missing CA file", ops.TLSConfig{CertFile: good.CertFile, KeyFile: good.KeyFile, CAFile: good.CAFile + ".nope"}, "CA file"},
		{"CA file without certificates", ops.TLSConfig{CertFile: good.CertFile, KeyFile: good.KeyFile, CAFile: good.KeyFile}, "no PEM certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			cfg.TLS = c.tls
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Validate = %v, want an error saying %q", err, c.words)
			}
		})
	}
	cfg := base
	cfg.TLS = good
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a good TLS configuration: %v", err)
	}
	cfg.GossipKey = []byte("short")
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "gossip key") {
		t.Fatalf("a 5-byte gossip key: %v", err)
	}
}

// TestTLSHandshakeFailsFastForPlainRaftDial: the stream layer's dial to a
// plaintext listener fails within its timeout rather than hanging.
func TestTLSHandshakeFailsFastForPlainRaftDial(t *testing.T) {
	pki := tlstest.New(t, "raft")
	cfg := pki.Issue("s1")
	server, err := cfg.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	client, err := cfg.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	layer, err := raftls.NewStreamLayer("127.0.0.1:0", nil, server, client)
	if err != nil {
		t.Fatal(err)
	}
	defer layer.Close()
	plain, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	go func() {
		// The plain transport accepts and reads, but never speaks TLS.
		for range plain.Consumer() {
		}
	}()
	start := time.Now()
	if _, err := layer.Dial(raft.ServerAddress(plain.LocalAddr()), 500*time.Millisecond); err == nil {
		t.Fatal("a TLS dial to a plaintext Raft peer succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the failed dial took %v", d)
	}
}
