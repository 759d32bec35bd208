package server_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	wal "github.com/hashicorp/raft-wal"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// walLastIndex opens a stopped server's raft-wal log and returns its last
// index.
func walLastIndex(t *testing.T, dir string) uint64 {
	t.Helper()
	w, err := wal.Open(dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer w.Close()
	last, err := w.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// The end of a raft-wal log can be torn: a crash during an append leaves
// it partly written (that append was never acknowledged), and damage to
// the last bytes looks the same. Here a follower stops as a crash stops
// it — no shutdown record, so its state file is not trusted — with the
// last append of its log torn, after a snapshot. The server must start on
// such a log (raft-wal drops the torn append, as etcd's WAL does),
// rebuild its state from the snapshot and the log after it, take back
// from the leader what it is missing, and end with every acknowledged
// write and the state the others hold.
func TestWALServerRecoversFromATornLastAppend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 3, func(cfg *server.Config) { cfg.Raft.LogStore = server.LogStoreWAL; cfg.Raft.TrailingLogs = 2 })
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "geo")
	writeSome(ctx, t, c, w, 10, "before")
	for _, s := range c.Running() {
		if err := s.Raft().Snapshot().Error(); err != nil {
			t.Fatalf("snapshot on %s: %v", s.NodeID(), err)
		}
	}
	writeSome(ctx, t, c, w, 5, "after-snapshot")
	c.WaitConverged(ctx)
	f := c.Follower(ctx)
	idx := c.Index(f)
	c.Stop(idx)
	if err := os.Remove(filepath.Join(c.ServerConfig(idx).DataDir, "fsm", fsm.FileName+".shutdown-digest")); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(c.ServerConfig(idx).DataDir, "raft", "wal")
	before := walLastIndex(t, dir)
	segments, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no segment files in %s (%v)", dir, err)
	}
	slices.Sort(segments)
	tail := segments[len(segments)-1]
	data, err := os.ReadFile(tail)
	if err != nil {
		t.Fatal(err)
	}
	// The segment is written from its start; past the last append its
	// bytes are zero. Tear the end of the last append.
	end := len(bytes.TrimRight(data, "\x00"))
	if end < 64 {
		t.Fatalf("tail segment %s holds %d bytes", tail, end)
	}
	clear(data[end-16 : end])
	if err := os.WriteFile(tail, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if after := walLastIndex(t, dir); after >= before {
		t.Fatalf("the torn log still ends at %d (it ended at %d): the damage missed the last append", after, before)
	}

	writeSome(ctx, t, c, w, 5, "while-down")
	c.Start(idx)
	digest := c.WaitConverged(ctx)
	if got, want := c.Server(idx).AppliedIndex(), c.Running()[0].AppliedIndex(); got != want {
		t.Fatalf("recovered server applied %d, the others %d", got, want)
	}
	if d, _ := c.Server(idx).FSM().Digest(); d != digest {
		t.Fatal("the recovered server's state differs from the others'")
	}
	checkAcked(ctx, t, c, c.Server(idx), w)
}

// A follower stopped, its log converted from boltdb to wal in place
// ('longfair convert-log'), and started on wal holds the converted log and
// term before it hears from anyone, rejoins, serves every acknowledged
// write and ends with the others' state. (That the conversion keeps each
// entry is TestConvertLogStoreKeepsEveryEntryAndTheVote's.)
func TestConvertedServerRejoinsWithItsLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "conv")
	writeSome(ctx, t, c, w, 10, "before")
	c.WaitConverged(ctx)
	f := c.Follower(ctx)
	idx := c.Index(f)
	applied := f.AppliedIndex()
	c.Stop(idx)

	res, err := server.ConvertLogStore(ctx, c.ServerConfig(idx).DataDir, server.LogStoreWAL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Last < applied {
		t.Fatalf("the converted log ends at %d, before the %d entries the server had applied", res.Last, applied)
	}
	c.Reconfigure(idx, func(cfg *server.Config) { cfg.Raft.LogStore = server.LogStoreWAL })
	// Started alone, with no leader to copy anything from, it holds
	// the log it was converted with.
	var others []int
	for i := range c.Len() {
		if i != idx {
			c.Stop(i)
			others = append(others, i)
		}
	}
	alone := c.Start(idx)
	if last := alone.Raft().LastIndex(); last != res.Last {
		t.Fatalf("started alone on the converted log, it ends at %d, want %d", last, res.Last)
	}
	if term, _ := strconv.ParseUint(alone.Raft().Stats()["term"], 10, 64); term < res.Term {
		t.Fatalf("started alone on the converted log, its term is %d, want at least %d", term, res.Term)
	}
	for _, i := range others {
		c.Start(i)
	}
	writeSome(ctx, t, c, w, 5, "after")
	digest := c.WaitConverged(ctx)
	if d, _ := c.Server(idx).FSM().Digest(); d != digest {
		t.Fatal("the converted server's state differs from the others'")
	}
	checkAcked(ctx, t, c, c.Server(idx), w)
	if last := c.Server(idx).Raft().LastIndex(); last < res.Last {
		t.Fatalf("the converted server's log ends at %d, before the %d it was converted with", last, res.Last)
	}
}
