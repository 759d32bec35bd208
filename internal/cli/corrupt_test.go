package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// TestServerRefusesDamagedDataFilesWithAdvice damages a stopped server's
// Raft log and state file the ways a disk or an operator does — a
// truncated raft.db, pages of fsm.db or of raft-wal's metadata file
// overwritten — and starts the real
// binary on each: it must exit non-zero with a message naming the file and
// what to do, and never with a Go panic or a fault's goroutine dump.
func TestServerRefusesDamagedDataFilesWithAdvice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin := testcluster.Binary(t)

	// Servers with some state, stopped cleanly, one for each Raft log
	// store.
	dataDirs := map[string]string{}
	for _, store := range server.LogStores() {
		dataDirs[store] = stoppedServer(ctx, t, store)
	}
	for _, tc := range []struct {
		name   string
		file   string // in the data dir
		damage func(t *testing.T, path string)
	}{
		{"raft.db truncated", "raft/raft.db", func(t *testing.T, path string) {
			// Two pages and a bit: both meta pages survive, every page
			// they point at is gone.
			if err := os.Truncate(path, 2*4096+100); err != nil {
				t.Fatal(err)
			}
		}},
		{"fsm.db pages overwritten", "fsm/fsm.db", func(t *testing.T, path string) {
			overwrite(t, path, 2*4096, 8*4096)
		}},
		{"raft.db pages overwritten", "raft/raft.db", func(t *testing.T, path string) {
			overwrite(t, path, 2*4096, 4*4096)
		}},
		{"fsm.db truncated", "fsm/fsm.db", func(t *testing.T, path string) {
			if err := os.Truncate(path, 3*4096); err != nil {
				t.Fatal(err)
			}
		}},
		{"wal-meta.db truncated", "raft/wal/wal-meta.db", func(t *testing.T, path string) {
			if err := os.Truncate(path, 2*4096+100); err != nil {
				t.Fatal(err)
			}
		}},
		{"wal-meta.db pages overwritten", "raft/wal/wal-meta.db", func(t *testing.T, path string) {
			overwrite(t, path, 2*4096, 2*4096)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := server.LogStoreBoltDB
			if strings.HasPrefix(tc.file, "raft/wal/") {
				store = server.LogStoreWAL
			}
			dir := t.TempDir()
			copyTree(t, dataDirs[store], dir)
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			tc.damage(t, path)
			rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
			defer rcancel()
			cmd := exec.CommandContext(rctx, bin, "server", "--node-id", "dmg-1", "--data-dir", dir,
				"--raft-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--acl=false", "--raft-log-store", store)
			out, err := cmd.CombinedOutput()
			if rctx.Err() != nil {
				t.Fatalf("the server kept running on a damaged %s:\n%s", tc.file, out)
			}
			if err == nil {
				t.Fatalf("the server exited 0 on a damaged %s:\n%s", tc.file, out)
			}
			text := string(out)
			for _, bad := range []string{"panic:", "goroutine ", "fatal error", "SIGBUS", "SIGSEGV"} {
				if strings.Contains(text, bad) {
					t.Fatalf("the server crashed on a damaged %s instead of refusing it (%q in its output):\n%s", tc.file, bad, firstLines(text, 20))
				}
			}
			if !strings.Contains(text, path) {
				t.Errorf("the refusal does not name the damaged file %s:\n%s", path, text)
			}
			if !strings.Contains(text, "empty data dir") || !strings.Contains(text, "snapshot") {
				t.Errorf("the refusal does not say what to do (rejoin with an empty data dir, or restore a snapshot):\n%s", text)
			}
		})
	}
}

// stoppedServer runs a one-server group keeping its Raft log in store,
// writes some state, stops it cleanly and returns its data dir.
func stoppedServer(ctx context.Context, t *testing.T, store string) string {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), "dmg-1")
	cfg := server.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.Bootstrap = "dmg-1", dataDir, true
	cfg.RaftAddr, cfg.GRPCAddr, cfg.GossipAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", ""
	cfg.ACL.Enabled = false
	cfg.Raft.LogStore = store
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	testcluster.Retry(ctx, t, "create account", func() error {
		_, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"})
		return err
	})
	for i := range 200 {
		if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{
			Id: fmt.Sprintf("g%d", i), Account: "astro", AmountMicroSu: 1_000_000, Note: strings.Repeat("n", 200),
		}); err != nil {
			t.Fatal(err)
		}
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	return dataDir
}

// overwrite fills n bytes of path from off with seeded pseudo-random bytes.
func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestVerifyStateCommandShowsEveryServer runs 'longfair operator
// verify-state' against a healthy three-server group: one row per server,
// all at the same checkpoint index with the same digest, all OK, and exit
// status 0.
func TestVerifyStateCommandShowsEveryServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := startBackupGroup(ctx, t, "vs", 3)
	out := runCLI(t, "operator", "verify-state", "--addr", addrFlag(g))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SERVER") {
		t.Fatalf("verify-state printed:\n%s\nwant a header and one row per server", out)
	}
	var index, digest string
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "OK" {
			t.Errorf("row %q: want OK", line)
			continue
		}
		if index == "" {
			index, digest = f[1], f[2]
		}
		if f[1] != index || f[2] != digest {
			t.Errorf("row %q: want index %s and digest %s like the others", line, index, digest)
		}
	}
}
