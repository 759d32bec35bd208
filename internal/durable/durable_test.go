package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSyncDirSyncsADirectoryAndRefusesAMissingOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("syncing a missing directory: %v, want not-exist", err)
	}
}
