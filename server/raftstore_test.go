package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"go.etcd.io/bbolt"

	"github.com/longfair/longfair/internal/boltcheck"
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
	for _, kind := range LogStores() {
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
			for _, want := range []string{"keeps its Raft log in " + kind, "--raft-log-store " + kind, "longfair convert-log --data-dir " + filepath.Dir(dir), "--to " + other} {
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
	w, err := wal.Open(filepath.Join(dir, walLogDir))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, kind := range LogStores() {
		if _, err := openRaftStores(dir, kind, 1, nil); err == nil || !strings.Contains(err.Error(), "holds both") {
			t.Errorf("a dir with both logs opened as %s: %v", kind, err)
		}
	}
}

// A log store's leftovers that hold no log (an empty wal/ from a first
// start that failed) do not decide the store; a log that lost its index,
// or snapshots with no log beside them, are refused: opening would start
// an empty log under what the server had acknowledged.
func TestLogStoreJudgesWhatIsThereNotWhatIsNamed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, walLogDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, walLogDir, "LOCK"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := openRaftStores(dir, LogStoreBoltDB, 1, nil)
	if err != nil {
		t.Fatalf("an empty wal/ kept a new boltdb log from opening: %v", err)
	}
	st.close()

	dir = t.TempDir()
	storeSome(t, dir, LogStoreWAL, 3)
	if err := os.Remove(filepath.Join(dir, walLogDir, "wal-meta.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := openRaftStores(dir, LogStoreWAL, 1, nil); !errors.Is(err, boltcheck.ErrCorrupt) || !strings.Contains(err.Error(), "no wal-meta.db") {
		t.Fatalf("segments without their metadata: %v, want a refusal naming the missing wal-meta.db", err)
	}

	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "snapshots", "2-10-1700000000000"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshots", "2-10-1700000000000", "meta.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kind := range LogStores() {
		if _, err := openRaftStores(dir, kind, 1, nil); !errors.Is(err, boltcheck.ErrCorrupt) || !strings.Contains(err.Error(), "snapshots but no Raft log") {
			t.Errorf("snapshots without a log opened as %s: %v", kind, err)
		}
	}
}

// A second server on a new data dir, for either store, is refused by the
// Raft directory's lock from the first server's first open, before any
// log file exists to be locked (raft-wal would hang on its metadata file).
func TestANewLogIsLockedFromItsFirstOpen(t *testing.T) {
	for _, kind := range LogStores() {
		dir := t.TempDir()
		first, err := openRaftStores(dir, kind, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openRaftStores(dir, kind, 1, nil)
		first.close()
		if err == nil || !strings.Contains(err.Error(), dir+": it is locked by another process") {
			t.Fatalf("a second %s open of a new log: %v, want a refusal naming %s as locked", kind, err, dir)
		}
	}
}

// raft-wal v0.4.2 seals a full segment inside an append and records the
// switch to the next segment afterwards, in the background; a log closed
// in between opens but refuses every append. checkWALTail must refuse
// exactly those logs: for logs closed at every length across a few
// segment switches, it refuses a log if and only if raft-wal can no
// longer append to it.
func TestWALTailCheckRefusesExactlyTheLogsThatCannotAppend(t *testing.T) {
	quiet := wal.WithLogger(hclog.NewNullLogger())
	refused := 0
	for n := 1; n <= 80; n++ {
		dir := t.TempDir()
		w, err := wal.Open(dir, wal.WithSegmentSize(4096), quiet)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= n; i++ {
			if err := w.StoreLogs([]*raft.Log{{Index: uint64(i), Term: 1, Data: make([]byte, 100)}}); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		w.Close()
		checkErr := checkWALTail(dir)
		w, err = wal.Open(dir, wal.WithSegmentSize(4096), quiet)
		if err != nil {
			t.Fatal(err)
		}
		appendErr := w.StoreLogs([]*raft.Log{{Index: uint64(n + 1), Term: 1, Data: make([]byte, 100)}})
		w.Close()
		if (checkErr != nil) != (appendErr != nil) {
			t.Fatalf("log of %d entries: the check says %v, an append says %v", n, checkErr, appendErr)
		}
		if checkErr != nil {
			refused++
			if !errors.Is(checkErr, boltcheck.ErrCorrupt) || !strings.Contains(checkErr.Error(), "empty data dir") {
				t.Fatalf("refusal %q does not say what to do", checkErr)
			}
		}
	}
	// raft-wal's Close marks the log closed before its background switch
	// can run, so some of these logs are always closed in between; if none
	// were, this test would show nothing.
	if refused == 0 {
		t.Fatal("no log was closed between a segment's seal and the switch: the check was not exercised")
	}
	t.Logf("%d of 80 logs were closed between a segment's seal and the switch", refused)
}

// A damaged entry in a sealed segment opens without error in raft-wal and
// would panic hashicorp/raft when it reads it at start; the store refuses
// it at open.
func TestWALDamagedEntryIsRefusedAtOpen(t *testing.T) {
	dir := t.TempDir()
	walDir := filepath.Join(dir, walLogDir)
	if err := os.Mkdir(walDir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := wal.Open(walDir, wal.WithSegmentSize(4096), wal.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		if err := w.StoreLogs([]*raft.Log{{Index: uint64(i), Term: 1, Data: make([]byte, 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	// One more append waits for the last switch, so the log is whole.
	if err := w.StoreLogs([]*raft.Log{{Index: 201, Term: 1, Data: make([]byte, 100)}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	segments, _ := filepath.Glob(filepath.Join(walDir, "*.wal"))
	slices.Sort(segments)
	if len(segments) < 2 {
		t.Fatalf("want several segments, have %d", len(segments))
	}
	f, err := os.OpenFile(segments[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The first entry's frame length, just after the segment's header.
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, 32+4); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = openRaftStores(dir, LogStoreWAL, 1, nil)
	if !errors.Is(err, boltcheck.ErrCorrupt) || !strings.Contains(err.Error(), "entry 1 of") || !strings.Contains(err.Error(), "empty data dir") {
		t.Fatalf("a damaged entry: %v, want a refusal naming the entry and saying what to do", err)
	}
}

// raft-wal reads its metadata file trusting it: a well-formed bbolt file
// without raft-wal's buckets would panic it. The server refuses it.
func TestWALMetadataWithoutItsBucketsIsRefused(t *testing.T) {
	dir := t.TempDir()
	walDir := filepath.Join(dir, walLogDir)
	if err := os.Mkdir(walDir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(walDir, "wal-meta.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = openRaftStores(dir, LogStoreWAL, 1, nil)
	if !errors.Is(err, boltcheck.ErrCorrupt) || !strings.Contains(err.Error(), "empty data dir") {
		t.Fatalf("metadata without raft-wal's buckets: %v, want a refusal saying what to do", err)
	}
	// And nothing is left holding the file.
	_, err = openRaftStores(dir, LogStoreWAL, 1, nil)
	if strings.Contains(fmt.Sprint(err), "locked") {
		t.Fatalf("a second open finds the file still locked: %v", err)
	}
}
