package server_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// TestRestartKeepsStateWithoutReplayingTheLog restarts a follower whose Raft
// log has been compacted by snapshots. Raft neither restores the snapshot
// into the FSM at start (NoSnapshotRestoreOnStart) nor still has the early
// entries, so the only way the server can hold the full state is from the
// FSM's own database, with the entries it applied before skipped.
func TestRestartKeepsStateWithoutReplayingTheLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Keep only two entries behind each snapshot.
	c := testcluster.NewWith(t, 3, func(cfg *server.Config) { cfg.Raft.TrailingLogs = 2 })
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "bio")
	writeSome(ctx, t, c, w, 10, "before")

	f := c.Follower(ctx)
	idx := c.Index(f)
	// Compact every server's log, then stop the follower.
	for _, s := range c.Running() {
		if err := s.Raft().Snapshot().Error(); err != nil {
			t.Fatalf("snapshot on %s: %v", s.NodeID(), err)
		}
	}
	c.WaitConverged(ctx)
	applied, _ := f.FSM().AppliedIndex()
	digest, err := f.FSM().Digest()
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.LogStore().FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	if first <= 1 || first > applied {
		t.Fatalf("log of %s starts at %d after compaction, applied index %d: the test needs the early entries gone", f.NodeID(), first, applied)
	}
	c.Stop(idx)
	t.Logf("stopped %s at applied index %d; its log starts at %d", f.NodeID(), applied, first)

	// More writes while it is down.
	writeSome(ctx, t, c, w, 5, "while-down")

	// Reopened, before Raft runs: the state is there, as it was.
	reopened, err := server.New(c.ServerConfig(idx), c.Log())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := reopened.FSM().AppliedIndex(); got != applied {
		t.Fatalf("reopened FSM is at index %d, was %d when stopped", got, applied)
	}
	if d, err := reopened.FSM().Digest(); err != nil || d != digest {
		t.Fatalf("reopened FSM's state differs from before the stop (err %v)", err)
	}
	if err := reopened.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	c.Start(idx)
	c.WaitConverged(ctx)
	checkAcked(ctx, t, c, c.Server(idx), w)
}

// TestRestartAfterACrashRebuildsTheStateFromTheLog: the FSM commits
// without syncing the disk (fsm.Options.RebuiltFromLog), so a server whose
// state file was not closed cleanly — here it has no shutdown record and
// is torn, as a power loss can leave it — must not trust it: it starts
// empty, raft restores the latest snapshot and replays the log after it,
// and the server ends with every acknowledged write and the same state as
// the others.
func TestRestartAfterACrashRebuildsTheStateFromTheLog(t *testing.T) {
	forEachLogStore(t, restartAfterACrashRebuildsTheStateFromTheLog)
}

func restartAfterACrashRebuildsTheStateFromTheLog(t *testing.T, store func(*server.Config)) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 3, func(cfg *server.Config) { store(cfg); cfg.Raft.TrailingLogs = 2 })
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "bio")
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

	// What a crash leaves: no shutdown record, and a file whose last
	// writes did not all reach the disk.
	dir := filepath.Join(c.ServerConfig(idx).DataDir, "fsm")
	if err := os.Remove(filepath.Join(dir, fsm.FileName+".shutdown-digest")); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, fsm.FileName)
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	clear(data[len(data)/2:])
	if err := os.WriteFile(state, data, 0o600); err != nil {
		t.Fatal(err)
	}
	writeSome(ctx, t, c, w, 5, "while-down")

	c.Start(idx)
	c.WaitConverged(ctx)
	if got, want := c.Server(idx).AppliedIndex(), c.Running()[0].AppliedIndex(); got != want {
		t.Fatalf("restarted server applied %d, the others %d", got, want)
	}
	checkAcked(ctx, t, c, c.Server(idx), w)
}

func TestSnapshotSaveAndRestoreReproduceTheDigest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	w := &ackedWrites{jobs: map[uint64]string{}}
	w.account, w.user = setupAccount(ctx, t, c, "geo")
	writeSome(ctx, t, c, w, 6, "saved")
	saved := c.WaitConverged(ctx)

	// Save through a follower: the stream is proxied from the leader.
	f := c.Follower(ctx)
	op := longfairv1.NewOperatorClient(c.Conn(f))
	stream, err := op.SaveSnapshot(ctx, &longfairv1.SaveSnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var file []byte
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("save snapshot: %v", err)
		}
		file = append(file, chunk.GetData()...)
	}

	writeSome(ctx, t, c, w, 4, "after-save")
	if d := c.WaitConverged(ctx); d == saved {
		t.Fatal("writes after the save did not change the digest")
	}

	// A damaged file is refused and changes nothing.
	damaged := append([]byte(nil), file...)
	damaged[len(damaged)/2] ^= 0xff
	if _, err := restoreSnapshot(ctx, op, damaged); err == nil {
		t.Fatal("a damaged snapshot was restored")
	}
	if _, err := restoreSnapshot(ctx, op, file[:len(file)/2]); err == nil {
		t.Fatal("a truncated snapshot was restored")
	}

	// Restore through a follower too.
	if _, err := restoreSnapshot(ctx, op, file); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := c.WaitConverged(ctx); got != saved {
		t.Fatal("after the restore the servers' state differs from the state saved")
	}
	// The cluster keeps working after the restore, from the saved state.
	jobs, err := longfairv1.NewJobsClient(c.Conn(f)).ListJobs(consistent(ctx), &longfairv1.ListJobsRequest{Account: w.account})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.GetJobs()) != 6 {
		t.Fatalf("after restoring a snapshot taken with 6 jobs, %d are listed", len(jobs.GetJobs()))
	}
	if _, err := longfairv1.NewJobsClient(c.Conn(f)).SubmitJob(ctx, submitRequest(w.account, w.user, "post-restore", 1)); err != nil {
		t.Fatalf("submit after restore: %v", err)
	}
}

func restoreSnapshot(ctx context.Context, op longfairv1.OperatorClient, file []byte) (uint64, error) {
	stream, err := op.RestoreSnapshot(ctx)
	if err != nil {
		return 0, err
	}
	for len(file) > 0 {
		k := min(len(file), 64<<10)
		if err := stream.Send(&longfairv1.SnapshotChunk{Data: file[:k]}); err != nil {
			break // the server's reason comes with CloseAndRecv
		}
		file = file[k:]
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return 0, err
	}
	return resp.GetIndex(), nil
}
