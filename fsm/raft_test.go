package fsm

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/longfair/longfair/ledger"
)

// node is a single-server raft group over the FSM, with durable log and
// snapshot stores in dir, as a server runs it.
type node struct {
	raft  *raft.Raft
	fsm   *FSM
	store *raftboltdb.BoltStore
}

func startNode(t *testing.T, dir string, bootstrap bool) *node {
	t.Helper()
	f, err := Open(Options{Dir: filepath.Join(dir, "fsm"), noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, transport := raft.NewInmemTransport("s1")
	cfg := raft.DefaultConfig()
	cfg.LocalID = "s1"
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	cfg.ElectionTimeout = 50 * time.Millisecond
	cfg.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.NoSnapshotRestoreOnStart = true
	cfg.BatchApplyCh = true
	cfg.LogOutput = io.Discard
	r, err := raft.NewRaft(cfg, f, store, store, snaps, transport)
	if err != nil {
		t.Fatal(err)
	}
	if bootstrap {
		r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "s1", Address: transport.LocalAddr()}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for r.State() != raft.Leader {
		select {
		case <-ctx.Done():
			t.Fatal("no leader within 10s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return &node{raft: r, fsm: f, store: store}
}

func (n *node) stop(t *testing.T) {
	t.Helper()
	if err := n.raft.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	n.store.Close()
	n.fsm.Close()
}

func (n *node) propose(t *testing.T, cmd Command) *Result {
	t.Helper()
	data, err := Encode(ledger.Time(time.Now().UnixNano()), cmd)
	if err != nil {
		t.Fatal(err)
	}
	fut := n.raft.Apply(data, 5*time.Second)
	if err := fut.Error(); err != nil {
		t.Fatal(err)
	}
	return fut.Response().(*Result)
}

// Under real raft with durable stores: a restart with
// NoSnapshotRestoreOnStart re-delivers every entry after the last snapshot,
// and the FSM applies none of them twice — grants without ids, which would
// credit again, prove it.
func TestRaftRestartAppliesNothingTwice(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir, true)
	n.propose(t, &CreateAccount{Name: "phys"})
	for i := range 30 {
		if r := n.propose(t, &Grant{Account: "phys", Amount: ledger.SU(i+1) * su}); r.Err != nil {
			t.Fatal(r.Err)
		}
		if i == 10 {
			if err := n.raft.Snapshot().Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, _ := n.fsm.Balance("phys", 0)
	digest := stateDigest(t, n.fsm)
	last := n.raft.LastIndex()
	n.stop(t)

	n = startNode(t, dir, false)
	defer n.stop(t)
	if err := n.raft.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if idx, _ := n.fsm.AppliedIndex(); idx < last {
		t.Fatalf("FSM applied index %d after restart, raft's last index was %d", idx, last)
	}
	got, _ := n.fsm.Balance("phys", 0)
	if got.Granted != want.Granted || got.Granted != 465*su {
		t.Fatalf("granted %v after restart, want %v (465 SU): entries were applied twice", got.Granted, want.Granted)
	}
	if stateDigest(t, n.fsm) != digest {
		t.Fatal("the state changed across the restart")
	}
	r := n.propose(t, &Grant{Account: "phys", Amount: su})
	if info := r.Value.(GrantInfo); info.ID != fmt.Sprintf("g-%d", 31) {
		t.Fatalf("next generated grant id %q, want g-31", info.ID)
	}
}
