package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/server"
	"github.com/longfair/longfair/worker"
)

// backupGroup is a server group running in this process.
type backupGroup struct {
	t       *testing.T
	servers []*server.Server
}

// startBackupGroup starts n servers: the first bootstraps a group, the
// others join it through gossip and are added as voters by its leader.
func startBackupGroup(ctx context.Context, t *testing.T, name string, n int) *backupGroup {
	t.Helper()
	g := &backupGroup{t: t}
	dir := t.TempDir()
	for i := range n {
		cfg := server.DefaultConfig()
		cfg.NodeID = fmt.Sprintf("%s-%d", name, i+1)
		cfg.DataDir = filepath.Join(dir, cfg.NodeID)
		cfg.RaftAddr, cfg.GRPCAddr, cfg.GossipAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		// Token checks are tested with the ACL; this test is about the state.
		cfg.ACL.Enabled = false
		if i == 0 {
			cfg.Bootstrap = true
		} else {
			cfg.Join = []string{g.servers[0].GossipAddr()}
		}
		s, err := server.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Shutdown(sctx)
		})
		g.servers = append(g.servers, s)
	}
	g.waitFor(ctx, fmt.Sprintf("group %s to have %d voters and a leader all agree on", name, n), func() bool {
		leader := g.servers[0].Leader()
		if leader == "" {
			return false
		}
		for _, s := range g.servers {
			if s.Leader() != leader {
				return false
			}
			if s.IsLeader() {
				peers, err := s.Peers()
				if err != nil || len(peers) != n {
					return false
				}
			}
		}
		return true
	})
	return g
}

func (g *backupGroup) waitFor(ctx context.Context, what string, cond func() bool) {
	g.t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			g.t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// addr is every server's gRPC address, for --addr.
func (g *backupGroup) addr() string {
	var out []string
	for _, s := range g.servers {
		out = append(out, s.GRPCAddr())
	}
	return strings.Join(out, ",")
}

// digests returns each server's state digest.
func (g *backupGroup) digests() [][32]byte {
	var out [][32]byte
	for _, s := range g.servers {
		d, err := s.FSM().Digest()
		if err != nil {
			g.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// cli runs a longfair command as a user would and returns its stdout; it
// fails the test unless the command exits 0.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("longfair %s exited %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// TestSnapshotRestoresIntoAFreshGroup is the backup procedure of
// deploy/README.md: 'longfair operator snapshot save' from a group whose
// accounts ran, were charged and hold SUs for queued work; 'operator
// snapshot restore' into a new three-server group that never saw any of
// it. Every server of the new group then holds byte-identical state to the
// old one (same digest), 'ledger verify' passes, the balances and the
// whole hash-chained journal read the same, and the new group goes on
// working from there.
func TestSnapshotRestoresIntoAFreshGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers and a worker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	src := startBackupGroup(ctx, t, "old", 1)
	conn, err := grpc.NewClient(src.servers[0].GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Two accounts with grants; one runs an array on a worker and is
	// charged for it.
	for _, acc := range []string{"astro", "bio"} {
		if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: acc}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewUsersClient(conn).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: acc + "-user", Accounts: []string{acc}}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: acc + "-grant", Account: acc, AmountMicroSu: 5_000 * 1_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	wcfg := worker.DefaultConfig()
	wcfg.NodeID, wcfg.Join = "w1", []string{src.servers[0].GossipAddr()}
	wcfg.GossipAddr, wcfg.GRPCAddr, wcfg.WorkDir = "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	wcfg.Resources = map[string]float64{"cpu": 4, "mem": 8 << 30}
	ag, err := worker.New(wcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.Start(ctx); err != nil {
		t.Fatal(err)
	}
	jobs := longfairv1.NewJobsClient(conn)
	submit := func(acc, rid string, tasks int64) uint64 {
		t.Helper()
		resp, err := jobs.SubmitJob(ctx, &longfairv1.SubmitJobRequest{
			Account: acc, User: acc + "-user", Name: rid, RequestId: rid, Tasks: tasks,
			Demand: map[string]float64{"cpu": 1}, Walltime: durationpb.New(time.Hour), Command: []string{"sleep 0.05"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetJob().GetId()
	}
	ran := submit("astro", "ran", 4)
	src.waitFor(ctx, "the array to run", func() bool {
		j, err := src.servers[0].FSM().Job(ran)
		return err == nil && j.Succeeded == 4
	})
	// The worker leaves, so what remains is still: its node is down and
	// bio's job waits, holding SUs.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	ag.Shutdown(sctx)
	scancel()
	src.waitFor(ctx, "w1 down", func() bool {
		nodes := src.servers[0].FSM().Nodes()
		return len(nodes) == 1 && !nodes[0].Up
	})
	submit("bio", "queued", 3)

	saved := src.digests()[0]
	file := filepath.Join(t.TempDir(), "backup.snap")
	if out := cli(t, "operator", "snapshot", "save", file, "--addr", src.addr(), "--quiet"); !strings.Contains(out, "saved a snapshot") {
		t.Fatalf("snapshot save printed %q", out)
	}
	if src.digests()[0] != saved {
		t.Fatal("the source changed while it was saved; the comparison below would not mean anything")
	}
	oldBalances := cli(t, "balance", "--output", "json", "--addr", src.addr())
	oldJournal := filepath.Join(t.TempDir(), "old.jsonl")
	cli(t, "ledger", "export", "--out", oldJournal, "--addr", src.addr(), "--quiet")

	fresh := startBackupGroup(ctx, t, "new", 3)
	if d := fresh.digests()[0]; d == saved {
		t.Fatal("the fresh group already holds the saved state")
	}
	cli(t, "operator", "snapshot", "restore", file, "--yes", "--addr", fresh.addr(), "--quiet")
	fresh.waitFor(ctx, "every server of the new group to hold the saved state", func() bool {
		for _, d := range fresh.digests() {
			if d != saved {
				return false
			}
		}
		return true
	})
	if out := cli(t, "ledger", "verify", "--addr", fresh.addr()); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("ledger verify after the restore printed %q", out)
	}
	if newBalances := cli(t, "balance", "--output", "json", "--addr", fresh.addr()); newBalances != oldBalances {
		t.Errorf("balances differ after the restore:\nold %s\nnew %s", oldBalances, newBalances)
	}
	if !strings.Contains(oldBalances, "astro") || !strings.Contains(oldBalances, "bio") {
		t.Errorf("balance listing lacks the accounts: %s", oldBalances)
	}
	newJournal := filepath.Join(t.TempDir(), "new.jsonl")
	cli(t, "ledger", "export", "--out", newJournal, "--addr", fresh.addr(), "--quiet")
	a, errA := os.ReadFile(oldJournal)
	b, errB := os.ReadFile(newJournal)
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the exported journals differ after the restore (%d and %d bytes; %v %v)", len(a), len(b), errA, errB)
	}

	// The new group carries on from the restored state: a new job is held
	// against the restored balance, and the ledger still verifies.
	fconn, err := grpc.NewClient(fresh.servers[1].GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fconn.Close()
	if _, err := longfairv1.NewJobsClient(fconn).SubmitJob(ctx, &longfairv1.SubmitJobRequest{
		Account: "astro", User: "astro-user", Name: "after", RequestId: "after", Tasks: 2,
		Demand: map[string]float64{"cpu": 1}, Walltime: durationpb.New(time.Hour), Command: []string{"true"},
	}); err != nil {
		t.Fatalf("submit to the restored group: %v", err)
	}
	if out := cli(t, "ledger", "verify", "--addr", fresh.addr()); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("ledger verify after new work printed %q", out)
	}
}
