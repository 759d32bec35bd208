package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// storeSome opens the stores of kind in dir, appends n entries and a
// vote, and closes them.
func storeSome(t *testing.T, dir, kind string, n int) {
	t.Helper()
	st, err := openRaftStores(dir, kind, 1, nil)
	if err != nil {
		t.Fatalf("open %s stores: %v", kind, err)
	}
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}}
	}
	if err := st.logs.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := st.stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	if err := st.close(); err != nil {
		t.Fatal(err)
	}
}

// Each log store keeps what was appended across a close and reopen, and
// a data dir is never opened with the other store, which would start an
// empty log under the state and votes the server already has.
func TestLogStoreKeepsItsLogAndRefusesTheOther(t *testing.T) {
	for _, kind := range []string{LogStoreBoltDB, LogStoreWAL} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			storeSome(t, dir, kind, 5)

			st, err := openRaftStores(dir, kind, 1, nil)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			last, err := st.logs.LastIndex()
			if err != nil || last != 5 {
				t.Fatalf("reopened %s log ends at %d (%v), want 5", kind, last, err)
			}
			if had, err := st.hasState(); err != nil || !had {
				t.Fatalf("reopened %s stores have no state (%v)", kind, err)
			}
			// A second server on the same data dir is told so, not hung.
			if _, err := openRaftStores(dir, kind, 1, nil); err == nil || !strings.Contains(err.Error(), "locked by another process") {
				t.Fatalf("second open of an open %s log: %v, want a refusal saying it is locked", kind, err)
			}
			if err := st.close(); err != nil {
				t.Fatal(err)
			}

			other := LogStoreWAL
			if kind == LogStoreWAL {
				other = LogStoreBoltDB
			}
			_, err = openRaftStores(dir, other, 1, nil)
			if err == nil {
				t.Fatalf("a %s data dir opened as %s", kind, other)
			}
			for _, want := range []string{"keeps its Raft log in " + kind, "--raft-log-store " + kind, "empty data dir"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, map[string]string{LogStoreBoltDB: walLogDir, LogStoreWAL: boltLogFile}[kind])); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused open left the other store's files behind (%v)", err)
			}
		})
	}
}

func TestLogStoreRefusesADirHoldingBoth(t *testing.T) {
	dir := t.TempDir()
	storeSome(t, dir, LogStoreBoltDB, 1)
	if err := os.Mkdir(filepath.Join(dir, walLogDir), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{LogStoreBoltDB, LogStoreWAL} {
		if _, err := openRaftStores(dir, kind, 1, nil); err == nil || !strings.Contains(err.Error(), "holds both") {
			t.Errorf("a dir with both logs opened as %s: %v", kind, err)
		}
	}
}
