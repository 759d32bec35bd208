package cli

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
	"github.com/longfair/longfair/internal/testcluster"
)

// startBackupGroup starts n servers of the test cluster the way an admin
// builds a group by hand: the first bootstraps it alone, the others join
// it through gossip and are added as voters by its leader.
func startBackupGroup(ctx context.Context, t *testing.T, name string, n int) *testcluster.Cluster {
	t.Helper()
	c := testcluster.Empty(t)
	dir := c.Dir()
	for i := range n {
		cfg := testcluster.Config(dir, fmt.Sprintf("%s-%d", name, i+1))
		if i == 0 {
			cfg.Bootstrap = true
		} else {
			cfg.Join = []string{c.Server(0).GossipAddr()}
		}
		c.Add(cfg)
	}
	testcluster.WaitFor(ctx, t, fmt.Sprintf("group %s to have %d voters and a leader all agree on", name, n), func() bool {
		leader := c.Server(0).Leader()
		if leader == "" {
			return false
		}
		for _, s := range c.Running() {
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
	return c
}

// addrFlag is every server's gRPC address, for --addr.
func addrFlag(c *testcluster.Cluster) string { return strings.Join(c.Addrs(), ",") }

// digests returns each server's state digest.
func digests(t *testing.T, c *testcluster.Cluster) [][32]byte {
	t.Helper()
	var out [][32]byte
	for _, s := range c.Running() {
		d, err := s.FSM().Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// runCLI runs a longfair command as a user would and returns its stdout; it
// fails the test unless the command exits 0.
func runCLI(t *testing.T, args ...string) string {
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
	conn, err := grpc.NewClient(src.Server(0).GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
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
	ag := testcluster.Worker(t, src, "w1", nil)
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
	testcluster.WaitFor(ctx, t, "the array to run", func() bool {
		j, err := src.Server(0).FSM().Job(ran)
		return err == nil && j.Succeeded == 4
	})
	// The worker leaves, so what remains is still: its node is down and
	// bio's job waits, holding SUs.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	ag.Shutdown(sctx)
	scancel()
	testcluster.WaitFor(ctx, t, "w1 down", func() bool {
		nodes := src.Server(0).FSM().Nodes()
		return len(nodes) == 1 && !nodes[0].Up
	})
	submit("bio", "queued", 3)

	saved := digests(t, src)[0]
	file := filepath.Join(t.TempDir(), "backup.snap")
	if out := runCLI(t, "operator", "snapshot", "save", file, "--addr", addrFlag(src), "--quiet"); !strings.Contains(out, "saved a snapshot") {
		t.Fatalf("snapshot save printed %q", out)
	}
	if digests(t, src)[0] != saved {
		t.Fatal("the source changed while it was saved; the comparison below would not mean anything")
	}
	oldBalances := runCLI(t, "balance", "--output", "json", "--addr", addrFlag(src))
	oldJournal := filepath.Join(t.TempDir(), "old.jsonl")
	runCLI(t, "ledger", "export", "--out", oldJournal, "--addr", addrFlag(src), "--quiet")

	fresh := startBackupGroup(ctx, t, "new", 3)
	if d := digests(t, fresh)[0]; d == saved {
		t.Fatal("the fresh group already holds the saved state")
	}
	runCLI(t, "operator", "snapshot", "restore", file, "--yes", "--addr", addrFlag(fresh), "--quiet")
	testcluster.WaitFor(ctx, t, "every server of the new group to hold the saved state", func() bool {
		for _, d := range digests(t, fresh) {
			if d != saved {
				return false
			}
		}
		return true
	})
	if out := runCLI(t, "ledger", "verify", "--addr", addrFlag(fresh)); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("ledger verify after the restore printed %q", out)
	}
	if newBalances := runCLI(t, "balance", "--output", "json", "--addr", addrFlag(fresh)); newBalances != oldBalances {
		t.Errorf("balances differ after the restore:\nold %s\nnew %s", oldBalances, newBalances)
	}
	if !strings.Contains(oldBalances, "astro") || !strings.Contains(oldBalances, "bio") {
		t.Errorf("balance listing lacks the accounts: %s", oldBalances)
	}
	newJournal := filepath.Join(t.TempDir(), "new.jsonl")
	runCLI(t, "ledger", "export", "--out", newJournal, "--addr", addrFlag(fresh), "--quiet")
	a, errA := os.ReadFile(oldJournal)
	b, errB := os.ReadFile(newJournal)
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the exported journals differ after the restore (%d and %d bytes; %v %v)", len(a), len(b), errA, errB)
	}

	// The new group carries on from the restored state: a new job is held
	// against the restored balance, and the ledger still verifies.
	fconn, err := grpc.NewClient(fresh.Server(1).GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
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
	if out := runCLI(t, "ledger", "verify", "--addr", addrFlag(fresh)); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("ledger verify after new work printed %q", out)
	}
}
