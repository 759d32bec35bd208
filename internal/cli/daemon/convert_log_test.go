package daemon

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/server"
)

func TestConvertLogSaysWhatItDidAndWhatIsMissing(t *testing.T) {
	for _, args := range [][]string{{}, {"--data-dir", "/d"}, {"--to", "wal"}, {"--data-dir", "/d", "--to", "wal", "extra"}} {
		if err := runConvertLog(args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.As(err, new(cli.UsageError)) {
			t.Errorf("convert-log %q: %v, want a usage error", args, err)
		}
	}
	if err := runConvertLog([]string{"--data-dir", t.TempDir(), "--to", "rocksdb"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `convert to "boltdb" or "wal"`) {
		t.Errorf("an unknown store: %v", err)
	}

	// A real server's data dir, stopped.
	dataDir := filepath.Join(t.TempDir(), "s1")
	cfg := server.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.Bootstrap = "s1", dataDir, true
	cfg.RaftAddr, cfg.GRPCAddr, cfg.GossipAddr, cfg.ACL.Enabled = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", false
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runConvertLog([]string{"--data-dir", dataDir, "--to", "wal"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"from boltdb to wal", "--raft-log-store wal", "raft.db.before-wal"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q does not say %q", out.String(), want)
		}
	}
	cfg.Raft.LogStore = server.LogStoreWAL
	s, err = server.New(cfg, nil)
	if err != nil {
		t.Fatalf("the converted data dir does not open with wal: %v", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}
