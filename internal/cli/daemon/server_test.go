package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

func TestServerConfigLayersDefaultsFileAndFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "server.json")
	if err := os.WriteFile(file, []byte(`{"node_id": "from-file", "data_dir": "/file", "bootstrap_expect": 3, "raft": {"heartbeat_timeout": "1s"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := serverConfig([]string{"--config", file, "--data-dir", "/flag", "--join", "10.0.0.2:7412,10.0.0.3:7412", "--join", "10.0.0.4:7412"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != "from-file" {
		t.Errorf("node id %q: the file's value must stand when no flag is given", cfg.NodeID)
	}
	if cfg.DataDir != "/flag" {
		t.Errorf("data dir %q: a flag must override the file", cfg.DataDir)
	}
	if cfg.BootstrapExpect != 3 || time.Duration(cfg.Raft.HeartbeatTimeout) != time.Second {
		t.Errorf("file values lost: expect %d, heartbeat %v", cfg.BootstrapExpect, cfg.Raft.HeartbeatTimeout)
	}
	if cfg.GRPCAddr != server.DefaultGRPCAddr || cfg.Raft.ElectionTimeout != server.DefaultConfig().Raft.ElectionTimeout {
		t.Errorf("defaults lost: grpc %q, election timeout %v", cfg.GRPCAddr, cfg.Raft.ElectionTimeout)
	}
	if want := []string{"10.0.0.2:7412", "10.0.0.3:7412", "10.0.0.4:7412"}; strings.Join(cfg.Join, " ") != strings.Join(want, " ") {
		t.Errorf("join %v, want %v", cfg.Join, want)
	}
}

func TestServerCommandRefusesBadSettingsWithAdvice(t *testing.T) {
	var stderr bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-id", "s1"}, "--data-dir"},
		{[]string{"--node-id", "s1", "--data-dir", t.TempDir(), "--bootstrap", "--bootstrap-expect", "3"}, "not both"},
		{[]string{"--node-id", "s1", "--data-dir", t.TempDir(), "extra"}, "takes only flags"},
		{[]string{"--node-id", "s1", "--data-dir", t.TempDir(), "--log-level", "loud"}, "log level"},
		{[]string{"--config", filepath.Join(t.TempDir(), "missing.json")}, "config file"},
	} {
		err := runServer(tc.args, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("longfair server %v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
	if err := runServer([]string{"--help"}, io.Discard, &stderr); err != nil {
		t.Errorf("--help: %v", err)
	}
	if !strings.Contains(stderr.String(), "--bootstrap-expect 3") {
		t.Error("help text has no example")
	}
}

// serverProc is a 'longfair server' subprocess and a connection to it.
type serverProc struct {
	*testcluster.ServerProc
	conn *grpc.ClientConn
}

// startServerProc runs the binary as a server on loopback and connects to
// it once it has logged the addresses it bound.
func startServerProc(ctx context.Context, t *testing.T, bin, dataDir, id string, extra ...string) *serverProc {
	t.Helper()
	s := testcluster.StartServer(ctx, t, bin, dataDir, id, extra...)
	conn, err := grpc.NewClient(s.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &serverProc{ServerProc: s, conn: conn}
}

// TestServerProcessesSurviveKillDashNineOfTheLeader runs three 'longfair
// server' processes, kills the leader with SIGKILL, and checks that every
// acknowledged submission and grant is still there, on both survivors and
// on the killed server once it is back from its data dir.
func TestServerProcessesSurviveKillDashNineOfTheLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := testcluster.Binary(t)
	dir := t.TempDir()
	procs := map[string]*serverProc{}
	procs["s1"] = startServerProc(ctx, t, bin, dir, "s1", "--bootstrap-expect", "3")
	procs["s2"] = startServerProc(ctx, t, bin, dir, "s2", "--bootstrap-expect", "3", "--join", procs["s1"].Gossip)
	procs["s3"] = startServerProc(ctx, t, bin, dir, "s3", "--bootstrap-expect", "3", "--join", procs["s1"].Gossip)

	var leaderID string
	testcluster.Retry(ctx, t, "find the leader", func() error {
		p, err := longfairv1.NewOperatorClient(procs["s2"].conn).GetLeader(ctx, &longfairv1.GetLeaderRequest{})
		leaderID = p.GetId()
		return err
	})

	// Writes through every server.
	order := []string{"s1", "s2", "s3"}
	via := func(i int) *grpc.ClientConn { return procs[order[i%3]].conn }
	testcluster.Retry(ctx, t, "create account", func() error {
		_, err := longfairv1.NewAccountsClient(via(0)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"})
		return err
	})
	if _, err := longfairv1.NewUsersClient(via(1)).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"astro"}}); err != nil {
		t.Fatal(err)
	}
	acked := map[uint64]bool{}
	var grants []string
	submit := func(conn *grpc.ClientConn, rid string) error {
		resp, err := longfairv1.NewJobsClient(conn).SubmitJob(ctx, &longfairv1.SubmitJobRequest{
			Account: "astro", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 4,
			Walltime: durationpb.New(time.Minute), Command: []string{"/bin/true"}, RequestId: rid,
		})
		if err == nil {
			acked[resp.GetJob().GetId()] = true
		}
		return err
	}
	grant := func(conn *grpc.ClientConn, id string) error {
		_, err := longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: id, Account: "astro", AmountMicroSu: 1_000_000_000_000})
		if err == nil {
			grants = append(grants, id)
		}
		return err
	}
	for i := range 9 {
		if err := grant(via(i), fmt.Sprintf("g%d", i)); err != nil {
			t.Fatalf("grant through %s: %v", order[i%3], err)
		}
		if err := submit(via(i), fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatalf("submit through %s: %v", order[i%3], err)
		}
	}

	// kill -9 the leader.
	victim := procs[leaderID]
	victim.KillProcess()
	killed := time.Now()
	var survivors []*serverProc
	for _, id := range order {
		if id != leaderID {
			survivors = append(survivors, procs[id])
		}
	}
	testcluster.Retry(ctx, t, "submit after the kill", func() error { return submit(survivors[0].conn, "after-kill") })
	t.Logf("a write committed %v after kill -9 of leader %s", time.Since(killed).Round(time.Millisecond), leaderID)
	for i := range 4 {
		testcluster.Retry(ctx, t, "grant after the kill", func() error { return grant(survivors[i%2].conn, fmt.Sprintf("after-g%d", i)) })
	}

	checkAll := func(p *serverProc, md metadata.MD) {
		t.Helper()
		cctx := metadata.NewOutgoingContext(ctx, md)
		jobs, err := longfairv1.NewJobsClient(p.conn).ListJobs(cctx, &longfairv1.ListJobsRequest{Account: "astro", PageSize: 1000})
		if err != nil {
			t.Fatalf("list jobs on %s: %v", p.ID, err)
		}
		have := map[uint64]bool{}
		for _, j := range jobs.GetJobs() {
			have[j.GetId()] = true
		}
		for id := range acked {
			if !have[id] {
				t.Fatalf("acknowledged job %d missing on %s", id, p.ID)
			}
		}
		if len(have) != len(acked) {
			t.Fatalf("%s holds %d jobs, %d were acknowledged", p.ID, len(have), len(acked))
		}
		list, err := longfairv1.NewGrantsClient(p.conn).ListGrants(cctx, &longfairv1.ListGrantsRequest{Account: "astro", PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.GetGrants()) != len(grants) {
			t.Fatalf("%s holds %d grants, %d were acknowledged", p.ID, len(list.GetGrants()), len(grants))
		}
	}
	consistentMD := metadata.Pairs(longfairv1.ConsistentReadMetadataKey, "true")
	for _, p := range survivors {
		checkAll(p, consistentMD)
	}

	// The killed server restarts from its data dir on new ports, with no
	// --join: it finds the pool from the servers it remembered, the leader
	// updates its Raft address, and it catches up.
	back := startServerProc(ctx, t, bin, dir, leaderID, "--bootstrap-expect", "3")
	for {
		jobs, err := longfairv1.NewJobsClient(back.conn).ListJobs(ctx, &longfairv1.ListJobsRequest{Account: "astro", PageSize: 1000})
		if err == nil && len(jobs.GetJobs()) == len(acked) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("restarted %s did not catch up: %v", leaderID, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	checkAll(back, metadata.MD{})
	// And it serves writes again, forwarding them to the leader.
	testcluster.Retry(ctx, t, "submit through the restarted server", func() error { return submit(back.conn, "via-restarted") })
}
