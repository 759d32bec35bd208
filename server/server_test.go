package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

func TestDataDirBelongsToOneServer(t *testing.T) {
	dir := t.TempDir()
	cfg := testcluster.Config(dir, "d1")
	s, err := server.New(cfg, testcluster.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())

	// A second server on the same data dir is refused quickly, with the reason.
	t0 := time.Now()
	_, err = server.New(cfg, testcluster.Logger(t))
	if err == nil || !strings.Contains(err.Error(), "another server") {
		t.Fatalf("second server on the same data dir: %v", err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("refusing the second server took %v", d)
	}

	// A different node id on the data dir is refused, naming the right one.
	other := cfg
	other.NodeID = "d2"
	if _, err := server.New(other, testcluster.Logger(t)); err == nil || !strings.Contains(err.Error(), `belongs to node "d1"`) {
		t.Fatalf("other node id on the data dir: %v", err)
	}
}

func TestNewRefusesInvalidConfig(t *testing.T) {
	cfg := testcluster.Config(t.TempDir(), "x")
	cfg.Raft.MaxAppendEntries = 0
	if _, err := server.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "max_append_entries") {
		t.Fatalf("invalid config: %v", err)
	}
}
