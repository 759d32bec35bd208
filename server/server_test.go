package server

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestDataDirBelongsToOneServer(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, "d1")
	s, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())

	// A second server on the same data dir is refused quickly, with the reason.
	t0 := time.Now()
	_, err = New(cfg, testLogger(t))
	if err == nil || !strings.Contains(err.Error(), "another server") {
		t.Fatalf("second server on the same data dir: %v", err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("refusing the second server took %v", d)
	}

	// A different node id on the data dir is refused, naming the right one.
	other := cfg
	other.NodeID = "d2"
	if _, err := New(other, testLogger(t)); err == nil || !strings.Contains(err.Error(), `belongs to node "d1"`) {
		t.Fatalf("other node id on the data dir: %v", err)
	}
}

func TestNewRefusesInvalidConfig(t *testing.T) {
	cfg := testConfig(t.TempDir(), "x")
	cfg.Raft.MaxAppendEntries = 0
	if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "max_append_entries") {
		t.Fatalf("invalid config: %v", err)
	}
}
