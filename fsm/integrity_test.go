package fsm

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/internal/boltcheck"
	"github.com/longfair/longfair/ledger"
)

// digestAt waits for f's digest of checkpoint index.
func digestAt(t testing.TB, f *FSM, index uint64) [32]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := f.CheckpointDigest(ctx, index)
	if err != nil {
		t.Fatalf("digest of checkpoint %d: %v", index, err)
	}
	return d
}

// compareEntry is the leader's Checkpoint carrying its digest of index.
func compareEntry(t testing.TB, l *log, at ledger.Time, index uint64, d [32]byte) *raft.Log {
	return l.add(t, at, &Checkpoint{CompareIndex: index, Digest: hex.EncodeToString(d[:])})
}

// TestCheckpointDigestIsExactWhateverTheBatches applies one log to two
// replicas, one entry at a time and all in one batch: their digests at
// each checkpoint must be equal, and equal to Digest of a replica stopped
// just before the checkpoint — the index is exact however Raft batches.
func TestCheckpointDigestIsExactWhateverTheBatches(t *testing.T) {
	a, b, ref := newHarness(t), newHarness(t), newHarness(t)
	l := &log{}
	at := t0
	var entries []*raft.Log
	add := func(cmd Command) *raft.Log {
		at = at.Add(time.Second)
		e := l.add(t, at, cmd)
		entries = append(entries, e)
		return e
	}
	add(&CreateAccount{Name: "phys"})
	add(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	add(&Grant{ID: "g1", Account: "phys", Amount: 100 * ledger.MicroPerSU})
	add(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32}})
	add(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	cp1 := add(&Checkpoint{})
	add(&Grant{ID: "g2", Account: "phys", Amount: 5 * ledger.MicroPerSU})
	add(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	cp2 := add(&Checkpoint{})
	add(&CancelJob{JobID: 1})

	for _, e := range entries {
		a.f.Apply(e)
	}
	b.f.ApplyBatch(entries)
	for _, cp := range []*raft.Log{cp1, cp2} {
		// ref applies everything before the checkpoint, in one batch.
		var before []*raft.Log
		for _, e := range entries {
			if e.Index < cp.Index && e.Index > ref.f.st.applied {
				before = append(before, e)
			}
		}
		ref.f.ApplyBatch(before)
		want, err := ref.f.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if da, db := digestAt(t, a.f, cp.Index), digestAt(t, b.f, cp.Index); da != want || db != want {
			t.Errorf("checkpoint %d: digests %x (one by one) and %x (one batch), want %x (the state before it)", cp.Index, da[:4], db[:4], want[:4])
		}
		ref.f.Apply(cp)
	}
}

// TestCheckpointFindsAnEditedReplica edits a grant's amount in one
// replica's bbolt file: the next checkpoint's comparison marks that
// replica, and only it, diverged, naming the index; a compare that matches
// leaves a replica alone.
func TestCheckpointFindsAnEditedReplica(t *testing.T) {
	leader, good, bad := newHarness(t), newHarness(t), newHarness(t)
	replicas := []*harness{leader, good, bad}
	l := &log{}
	at := t0
	apply := func(e *raft.Log) {
		for _, r := range replicas {
			if res, ok := r.f.Apply(e).(*Result); !ok || res.Err != nil {
				t.Fatalf("apply %d: %v", e.Index, res)
			}
		}
	}
	for _, cmd := range []Command{
		&CreateAccount{Name: "phys"},
		&Grant{ID: "g1", Account: "phys", Amount: 100 * ledger.MicroPerSU},
	} {
		at = at.Add(time.Second)
		apply(l.add(t, at, cmd))
	}
	round := func() uint64 {
		at = at.Add(time.Second)
		cp := l.add(t, at, &Checkpoint{})
		apply(cp)
		apply(compareEntry(t, l, at, cp.Index, digestAt(t, leader.f, cp.Index)))
		// The compare happens when both digests are known.
		for _, r := range replicas {
			digestAt(t, r.f, cp.Index)
		}
		return cp.Index
	}
	round()
	for _, r := range replicas {
		if d := r.f.Diverged(); d != nil {
			t.Fatalf("a replica of the same log diverged: %v", d)
		}
	}

	// Someone edits the grant in bad's file.
	err := bad.f.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketGrants)
		var rec map[string]any
		if err := json.Unmarshal(bk.Get([]byte("g1")), &rec); err != nil {
			return err
		}
		rec["amount"] = 1e15
		v, _ := json.Marshal(rec)
		return bk.Put([]byte("g1"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	idx := round()
	d := bad.f.Diverged()
	if d == nil {
		t.Fatal("the edited replica was not found")
	}
	if d.Index != idx || !strings.Contains(d.Error(), fmt.Sprint(idx)) || !strings.Contains(d.Error(), "restore") {
		t.Errorf("divergence %v: want index %d named, and what to do", d, idx)
	}
	for _, r := range []*harness{leader, good} {
		if d := r.f.Diverged(); d != nil {
			t.Errorf("an unedited replica diverged: %v", d)
		}
	}
	// Replicated state is untouched by the comparison: leader and good
	// still hold the same bytes.
	dl, _ := leader.f.Digest()
	dg, _ := good.f.Digest()
	if dl != dg {
		t.Error("the check changed replicated state differently on two replicas")
	}
}

// TestCheckpointCommandShape checks the refusals: a digest without an
// index, a malformed digest, and a checkpoint inside a multi-command entry.
func TestCheckpointCommandShape(t *testing.T) {
	for _, c := range []*Checkpoint{
		{Digest: strings.Repeat("ab", 32)},
		{CompareIndex: 3, Digest: "xyz"},
		{CompareIndex: 3},
	} {
		if _, err := Encode(t0, c); KindOf(err) != KindInvalid {
			t.Errorf("Encode(%+v): %v, want InvalidArgument", c, err)
		}
	}
	h := newHarness(t)
	one, err := Encode(t0, &Checkpoint{})
	if err != nil {
		t.Fatal(err)
	}
	multi, err := EncodeMulti([][]byte{one, one})
	if err != nil {
		t.Fatal(err)
	}
	resp := h.f.Apply(h.log.addRaw(multi))
	rs, ok := resp.(Results)
	if !ok || len(rs) != 2 || KindOf(rs[0].Err) != KindInvalid {
		t.Fatalf("checkpoint in a multi-command entry: %v, want refused", resp)
	}
	if got := h.ok(&Checkpoint{}).(CheckpointInfo); got.Index != 2 {
		t.Errorf("checkpoint result %+v, want index 2", got)
	}
}

// A checkpoint of the release before (version 3), which its leader still
// proposes during a rolling upgrade, is digested as today's is; one of
// the first version never was, and still is not.
func TestCheckpointOfThePreviousVersionIsDigested(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	for _, c := range []struct {
		version uint8
		digests bool
	}{{CommandVersion, true}, {wholeUnitsVersion, true}, {legacyVersion, false}} {
		e := h.log.addRaw(rawEntry(c.version, TypeCheckpoint, h.now, `{}`))
		h.f.Apply(e)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := h.f.CheckpointDigest(ctx, e.Index)
		cancel()
		if got := err == nil; got != c.digests {
			t.Errorf("a version-%d checkpoint digested: %v (%v), want %v", c.version, got, err, c.digests)
		}
	}
}

// BenchmarkDigest measures a checkpoint's digest, and the start-up check
// of Open, on a state of 100,000 finished and pending jobs.
func BenchmarkDigest(b *testing.B) {
	dir := b.TempDir()
	f, err := Open(Options{Dir: dir, noSync: true})
	if err != nil {
		b.Fatal(err)
	}
	l := &log{}
	at := t0
	var entries []*raft.Log
	for _, cmd := range []Command{
		&CreateAccount{Name: "phys"},
		&CreateUser{Name: "ann", Accounts: []string{"phys"}},
		&Grant{Account: "phys", Amount: 1e12 * ledger.MicroPerSU},
	} {
		entries = append(entries, l.add(b, at, cmd))
	}
	const jobs = 100_000
	for i := range jobs {
		at = at.Add(time.Millisecond)
		entries = append(entries, l.add(b, at, &SubmitJob{Account: "phys", User: "ann", Name: fmt.Sprintf("job-%d", i),
			Demand: map[string]float64{"cpu": 1, "mem": 2e9}, Tasks: 1, Walltime: time.Hour, Command: []string{"/bin/sim", "--input", "data.h5"}}))
	}
	for i := 0; i < len(entries); i += 1000 {
		f.ApplyBatch(entries[i:min(i+1000, len(entries))])
	}
	var size int64
	if st, err := os.Stat(f.path); err == nil {
		size = st.Size()
	}
	if err := f.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	b.Run("digest", func(b *testing.B) {
		for range b.N {
			if _, err := f.Digest(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size)/1e6, "MB")
	})
	// What a checkpoint costs the apply path: the batch before it commits
	// and a read transaction begins; the digest runs beside later applies.
	b.Run("apply-checkpoint", func(b *testing.B) {
		for range b.N {
			at = at.Add(time.Millisecond)
			e := l.add(b, at, &Checkpoint{})
			b.StartTimer()
			f.ApplyBatch([]*raft.Log{e})
			b.StopTimer()
			digestAt(b, f, e.Index)
		}
	})
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("precheck", func(b *testing.B) {
		for range b.N {
			if err := boltcheck.Precheck(f.path, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bbolt-check", func(b *testing.B) {
		db, err := bolt.Open(f.path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		for range b.N {
			if err := db.View(func(tx *bolt.Tx) error { return boltcheck.Check(tx, f.path, "") }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open-with-check", func(b *testing.B) {
		for range b.N {
			g, err := Open(Options{Dir: dir, noSync: true})
			if err != nil {
				b.Fatal(err)
			}
			g.Close()
		}
	})
}

// TestCheckpointChangesOnlyTheAppliedIndex applies a log with checkpoints
// to one replica and the same log with those entries replaced by ones an
// earlier release refuses (an unknown command type) to another: both must
// hold the same state, so a group can be upgraded one server at a time.
func TestCheckpointChangesOnlyTheAppliedIndex(t *testing.T) {
	newer, older := newHarness(t), newHarness(t)
	at := t0
	for i, cmd := range []Command{
		&CreateAccount{Name: "phys"},
		&Checkpoint{},
		&Grant{ID: "g1", Account: "phys", Amount: 5 * ledger.MicroPerSU},
		&Checkpoint{},
		&CreateUser{Name: "ann", Accounts: []string{"phys"}},
	} {
		// The checkpoints carry a later time than what follows them, as a
		// leader's clock may after an election.
		stamp := at.Add(time.Duration(i) * time.Second)
		if _, ok := cmd.(*Checkpoint); ok {
			stamp = at.Add(time.Hour)
		}
		e := newer.log.add(t, stamp, cmd)
		newer.f.Apply(e)
		unknown := append([]byte(nil), e.Data...)
		if _, ok := cmd.(*Checkpoint); ok {
			unknown[1] = 250
		}
		older.f.Apply(older.log.addRaw(unknown))
	}
	dn, _ := newer.f.Digest()
	do, _ := older.f.Digest()
	if dn != do {
		t.Error("a replica that applied checkpoints holds other state than one that refused them")
	}
}

// TestStateChangedWhileStoppedIsFoundAtStart closes an FSM cleanly, edits
// its file, and opens it again: it must know at once, before serving
// anything, that its state is not what it shut down with. An FSM reopened
// without an edit must not.
func TestStateChangedWhileStoppedIsFoundAtStart(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(Options{Dir: h.dir, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Diverged(); d != nil {
		t.Fatalf("an FSM reopened unchanged says it diverged: %v", d)
	}
	applied, _ := f.AppliedIndex()
	editStateFile(t, f, func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketGrants)
		var rec map[string]any
		if err := json.Unmarshal(bk.Get([]byte("g1")), &rec); err != nil {
			return err
		}
		rec["amount"] = 1e15
		v, _ := json.Marshal(rec)
		return bk.Put([]byte("g1"), v)
	})
	g, err := Open(Options{Dir: h.dir, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d := g.Diverged()
	if d == nil || !d.WhileStopped || d.Index != applied || !strings.Contains(d.Error(), "while it was stopped") {
		t.Fatalf("the edited FSM's divergence is %v; want one saying its file changed while stopped, at index %d", d, applied)
	}
}

// With RebuiltFromLog (the servers' FSM, which skips disk syncs), a state
// file that was closed cleanly is kept, and one that was not — no shutdown
// record, as after a crash; torn, as after a power loss — is discarded
// and the FSM starts empty, for raft to rebuild from its snapshot and log.
// Without it (every commit synced) such a file is kept.
func TestUncleanStateIsDiscardedOnlyWhenRebuiltFromLog(t *testing.T) {
	h := newWorkload(t, 8).run(200)
	applied, _ := h.f.AppliedIndex()
	want := digestOf(t, h.f)
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	open := func(rebuilt bool) *FSM {
		t.Helper()
		f, err := Open(Options{Dir: h.dir, RebuiltFromLog: rebuilt})
		if err != nil {
			t.Fatalf("open (RebuiltFromLog %v): %v", rebuilt, err)
		}
		return f
	}
	record := filepath.Join(h.dir, shutdownFile)

	f := open(true) // closed cleanly: kept
	if got, _ := f.AppliedIndex(); got != applied || digestOf(t, f) != want {
		t.Fatalf("a cleanly closed state reopened at index %d (want %d) or with another digest", got, applied)
	}
	if _, err := os.Stat(record); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the shutdown record is still there while the FSM runs: %v", err)
	}
	f.Close()
	os.Remove(record) // as if it had crashed
	f = open(false)
	if got, _ := f.AppliedIndex(); got != applied {
		t.Fatalf("with synced commits, a state without shutdown record reopened at index %d, want %d", got, applied)
	}
	f.Close()
	os.Remove(record)
	f = open(true)
	if got, _ := f.AppliedIndex(); got != 0 {
		t.Fatalf("without a shutdown record the state was trusted (index %d)", got)
	}
	f.Close()

	// A torn file is discarded too, not refused as damaged.
	os.Remove(record)
	data, err := os.ReadFile(filepath.Join(h.dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 3; i < len(data)/3+8192 && i < len(data); i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(filepath.Join(h.dir, FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	f = open(true)
	if got, _ := f.AppliedIndex(); got != 0 {
		t.Fatalf("a torn state file reopened at index %d", got)
	}
	f.Close()
}
