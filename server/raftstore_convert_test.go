package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// writeLog fills the stores of kind in the Raft directory dir with n
// entries of several terms from index 101 (as a log compacted by a
// snapshot starts), with extensions and append times, a term and a vote,
// and closes them.
func writeLog(t *testing.T, dir, kind string, n int) []*raft.Log {
	t.Helper()
	st, err := openRaftStores(dir, kind, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: uint64(101 + i), Term: uint64(1 + i/10), Type: raft.LogCommand, Data: []byte(strings.Repeat(string(rune('a'+i%26)), i+1)),
			Extensions: []byte{byte(i), 7}, AppendedAt: time.Unix(1_700_000_000+int64(i), 0).UTC()}
	}
	if err := st.logs.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]uint64{"CurrentTerm": 7, "LastVoteTerm": 6} {
		if err := st.stable.SetUint64([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.stable.Set([]byte("LastVoteCand"), []byte("s2")); err != nil {
		t.Fatal(err)
	}
	return logs
}

// checkLog opens the stores of kind and checks they hold want and the
// term and vote writeLog wrote.
func checkLog(t *testing.T, dir, kind string, want []*raft.Log) {
	t.Helper()
	st, err := openRaftStores(dir, kind, 1, nil)
	if err != nil {
		t.Fatalf("open the converted %s log: %v", kind, err)
	}
	defer st.close()
	for _, w := range want {
		var got raft.Log
		if err := st.logs.GetLog(w.Index, &got); err != nil {
			t.Fatalf("entry %d: %v", w.Index, err)
		}
		if got.Index != w.Index || got.Term != w.Term || got.Type != w.Type || !bytes.Equal(got.Data, w.Data) ||
			!bytes.Equal(got.Extensions, w.Extensions) || !got.AppendedAt.Equal(w.AppendedAt) {
			t.Fatalf("entry %d is %+v, want %+v", w.Index, got, *w)
		}
	}
	first, _ := st.logs.FirstIndex()
	last, _ := st.logs.LastIndex()
	if first != want[0].Index || last != want[len(want)-1].Index {
		t.Fatalf("the converted log holds %d–%d, want %d–%d", first, last, want[0].Index, want[len(want)-1].Index)
	}
	for k, v := range map[string]uint64{"CurrentTerm": 7, "LastVoteTerm": 6} {
		if got, err := st.stable.GetUint64([]byte(k)); err != nil || got != v {
			t.Fatalf("%s is %d (%v), want %d", k, got, err, v)
		}
	}
	if got, err := st.stable.Get([]byte("LastVoteCand")); err != nil || string(got) != "s2" {
		t.Fatalf("LastVoteCand is %q (%v), want s2", got, err)
	}
}

// Converting a stopped server's log keeps every entry, the term and the
// vote, in either direction; afterwards the data dir opens with the new
// store only, the old one is kept aside, and a second run says there is
// nothing to do.
func TestConvertLogStoreKeepsEveryEntryAndTheVote(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ from, to string }{{LogStoreBoltDB, LogStoreWAL}, {LogStoreWAL, LogStoreBoltDB}} {
		t.Run(c.from+"-to-"+c.to, func(t *testing.T) {
			dataDir := t.TempDir()
			dir := filepath.Join(dataDir, "raft")
			want := writeLog(t, dir, c.from, 300)
			res, err := ConvertLogStore(ctx, dataDir, c.to, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.From != c.from || res.First != 101 || res.Last != 400 || res.Term != 7 {
				t.Fatalf("conversion says %+v", res)
			}
			checkLog(t, dir, c.to, want)
			if _, err := openRaftStores(dir, c.from, 1, nil); err == nil {
				t.Fatalf("the data dir still opens as %s", c.from)
			}
			if _, err := os.Stat(res.Backup); err != nil {
				t.Fatalf("the old log was not kept aside: %v", err)
			}
			if _, err := ConvertLogStore(ctx, dataDir, c.to, nil); err == nil || !strings.Contains(err.Error(), "already in "+c.to) {
				t.Fatalf("a second conversion: %v, want 'already'", err)
			}
		})
	}
}

// A conversion interrupted after the old log was moved aside, before the
// new one was put in place, leaves no log; running it again converts from
// the log kept aside. A log moved aside by an earlier, finished conversion
// is never taken on its own, nor overwritten.
func TestConvertLogStoreResumesAnInterruptedRun(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "raft")
	want := writeLog(t, dir, LogStoreBoltDB, 40)
	res, err := ConvertLogStore(ctx, dataDir, LogStoreWAL, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The state of a run stopped between its two renames: the old log
	// moved aside, the new one still under its temporary name.
	if err := os.Rename(filepath.Join(dir, walLogDir), filepath.Join(dir, walLogDir+".converting")); err != nil {
		t.Fatal(err)
	}
	// No server starts on that: it would open an empty log under the
	// state it has.
	for _, kind := range LogStores() {
		if _, err := openRaftStores(dir, kind, 1, nil); err == nil || !strings.Contains(err.Error(), "convert-log' was interrupted; run it again") {
			t.Fatalf("a %s server started on an interrupted conversion: %v", kind, err)
		}
	}
	again, err := ConvertLogStore(ctx, dataDir, LogStoreWAL, nil)
	if err != nil {
		t.Fatalf("resumed conversion: %v", err)
	}
	if again.Backup != res.Backup || again.Last != 140 {
		t.Fatalf("resumed conversion says %+v", again)
	}
	checkLog(t, dir, LogStoreWAL, want)

	// Back to boltdb keeps the wal log aside too; going to wal again finds
	// the first conversion's copy in the way and leaves it alone.
	if _, err := ConvertLogStore(ctx, dataDir, LogStoreBoltDB, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertLogStore(ctx, dataDir, LogStoreWAL, nil); err == nil || !strings.Contains(err.Error(), "an earlier conversion moved aside") {
		t.Fatalf("converting over an earlier conversion's copy: %v", err)
	}
	// With no log and only such a copy, nothing is taken on its own.
	if err := os.Remove(filepath.Join(dir, boltLogFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertLogStore(ctx, dataDir, LogStoreWAL, nil); err == nil || !strings.Contains(err.Error(), "not used on its own") {
		t.Fatalf("converting from a stale copy alone: %v", err)
	}
}

// A log a running server holds is not converted under it.
func TestConvertLogStoreRefusesARunningServersLog(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "raft")
	for _, kind := range LogStores() {
		os.RemoveAll(dir)
		writeLog(t, dir, kind, 5)
		st, err := openRaftStores(dir, kind, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		to := map[string]string{LogStoreBoltDB: LogStoreWAL, LogStoreWAL: LogStoreBoltDB}[kind]
		_, err = ConvertLogStore(context.Background(), dataDir, to, nil)
		st.close()
		if err == nil || !strings.Contains(err.Error(), "stop the server") {
			t.Fatalf("converting an open %s log: %v, want a refusal saying to stop the server", kind, err)
		}
		if got, _ := logStoreOnDisk(dir); got != kind {
			t.Fatalf("the refused conversion left the log in %q", got)
		}
	}
}

// A wal log closed during raft-wal's segment switch can no longer be
// appended to (checkWALTail), but it is whole: converting it to boltdb
// keeps every entry, and converting it back gives a wal log that takes
// appends again.
func TestAWALLogThatCannotAppendIsConvertedWhole(t *testing.T) {
	ctx := context.Background()
	quiet := wal.WithLogger(hclog.NewNullLogger())
	for n := 1; n <= 80; n++ {
		dataDir := t.TempDir()
		walDir := filepath.Join(dataDir, "raft", walLogDir)
		if err := os.MkdirAll(walDir, 0o700); err != nil {
			t.Fatal(err)
		}
		w, err := wal.Open(walDir, wal.WithSegmentSize(4096), quiet)
		if err != nil {
			t.Fatal(err)
		}
		var want []*raft.Log
		for i := 1; i <= n; i++ {
			l := &raft.Log{Index: uint64(i), Term: 3, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, 100)}
			want = append(want, l)
			if err := w.StoreLogs([]*raft.Log{l}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		if checkWALTail(walDir) == nil {
			continue // this one can append; look for one that cannot
		}
		if _, err := ConvertLogStore(ctx, dataDir, LogStoreBoltDB, nil); err != nil {
			t.Fatalf("converting a whole log that cannot append: %v", err)
		}
		st, err := openRaftStores(filepath.Join(dataDir, "raft"), LogStoreBoltDB, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range want {
			var got raft.Log
			if err := st.logs.GetLog(l.Index, &got); err != nil || !bytes.Equal(got.Data, l.Data) {
				t.Fatalf("entry %d after the conversion: %v", l.Index, err)
			}
		}
		st.close()
		if _, err := ConvertLogStore(ctx, dataDir, LogStoreWAL, nil); err != nil {
			t.Fatalf("converting back to wal: %v", err)
		}
		st, err = openRaftStores(filepath.Join(dataDir, "raft"), LogStoreWAL, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.close()
		if err := st.logs.StoreLogs([]*raft.Log{{Index: uint64(n + 1), Term: 3, Type: raft.LogCommand}}); err != nil {
			t.Fatalf("the converted wal log takes no append: %v", err)
		}
		return
	}
	t.Fatal("no log was closed between a segment's seal and the switch: nothing to convert")
}

// The Raft directory's lock keeps a server and a conversion apart, both
// ways.
func TestConvertLogStoreAndAServerNeverRunTogether(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "raft")
	writeLog(t, dir, LogStoreBoltDB, 5)
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertLogStore(context.Background(), dataDir, LogStoreWAL, nil); err == nil || !strings.Contains(err.Error(), "stop the server") {
		t.Fatalf("a conversion beside a holder of the lock: %v", err)
	}
	if _, err := openRaftStores(dir, LogStoreBoltDB, 1, nil); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("a server beside a holder of the lock: %v", err)
	}
	unlock()
	if _, err := ConvertLogStore(context.Background(), dataDir, LogStoreWAL, nil); err != nil {
		t.Fatal(err)
	}
}

// A server whose state file is there but whose Raft log is not (removed,
// or moved by hand) is refused, even before its first snapshot: it would
// start an empty log under the state it has.
func TestLogStoreRefusesAStateWithoutALog(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dataDir, "fsm"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "fsm", "fsm.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kind := range LogStores() {
		if _, err := openRaftStores(filepath.Join(dataDir, "raft"), kind, 1, nil); err == nil || !strings.Contains(err.Error(), "no Raft log, but the server's state") {
			t.Errorf("a %s log opened empty beside a state: %v", kind, err)
		}
	}
}
