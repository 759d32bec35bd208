package fsm

import (
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// Two servers that apply the same log, however raft batches it, hold
// byte-identical state, and give the same answer to every entry.
func TestReplicasAgree(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		w := newWorkload(t, seed)
		h := w.run(400)
		want := digestOf(t, h.f)

		other := openFSM(t, t.TempDir())
		responses := replay(t, other, h.log, []int{1, 7, 64, 3})
		if got := digestOf(t, other); got != want {
			t.Fatalf("seed %d: replica digest %x differs from %x", seed, got, want)
		}
		// The answers agree too: a client gets the same result from any server.
		ref := openFSM(t, t.TempDir())
		for i, e := range h.log.entries {
			a := ref.Apply(e)
			if !reflect.DeepEqual(a, responses[i]) {
				t.Fatalf("seed %d entry %d: answers differ:\n%#v\n%#v", seed, e.Index, a, responses[i])
			}
		}
		if !reflect.DeepEqual(h.f.View(h.now), other.View(h.now)) {
			t.Fatalf("seed %d: the replicas' scheduler views differ", seed)
		}
		refused := 0
		for _, r := range responses {
			if r.(*Result).Err != nil {
				refused++
			}
		}
		if refused == 0 || refused == len(responses) {
			t.Fatalf("seed %d: %d of %d entries refused; the workload should mix both", seed, refused, len(responses))
		}
	}
}

// A server restarted from its data directory keeps what it applied and
// skips the entries raft re-sends (those after its last snapshot), so
// nothing is applied twice; then it carries on in step with the others.
func TestRestartSkipsAppliedEntries(t *testing.T) {
	w := newWorkload(t, 11)
	h := w.run(300)
	before := digestOf(t, h.f)
	idx, _ := h.f.AppliedIndex()
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}

	f := openFSM(t, h.dir)
	if got, _ := f.AppliedIndex(); got != idx {
		t.Fatalf("applied index after restart = %d, want %d", got, idx)
	}
	if got := digestOf(t, f); got != before {
		t.Fatal("the state changed across a restart")
	}
	// raft replays everything since its (here: no) snapshot.
	for i, resp := range replay(t, f, h.log, []int{50}) {
		if resp != nil {
			t.Fatalf("entry %d was applied again after the restart: %#v", i+1, resp)
		}
	}
	if got := digestOf(t, f); got != before {
		t.Fatal("re-sent entries changed the state")
	}

	// Continue the workload on the restarted FSM and on a replica that never
	// stopped: they stay identical.
	w.h.f = f
	for range 100 {
		w.step()
	}
	fresh := openFSM(t, t.TempDir())
	replay(t, fresh, h.log, []int{16})
	if digestOf(t, fresh) != digestOf(t, f) {
		t.Fatal("the restarted FSM diverged from a replica that applied the same log")
	}
}

// Snapshot and restore reproduce the state exactly, replacing whatever the
// target held, and the restored FSM continues in step.
func TestSnapshotRestore(t *testing.T) {
	w := newWorkload(t, 21)
	h := w.run(300)
	want := digestOf(t, h.f)

	snap, err := h.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Applies keep going while the snapshot is persisted; it must still be
	// the state as of Snapshot().
	for range 20 {
		w.step()
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()

	th := newWorkload(t, 99).run(50) // a different, non-empty state
	target := th.f
	if err := target.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, target); got != want {
		t.Fatal("restored state differs from the snapshot")
	}

	// Catch the restored FSM up with the entries after the snapshot: it ends
	// identical to the source.
	idx, _ := target.AppliedIndex()
	replay(t, target, &log{entries: h.log.entries[idx:]}, []int{5})
	if digestOf(t, target) != digestOf(t, h.f) {
		t.Fatal("restored FSM diverged when applying later entries")
	}
	if !reflect.DeepEqual(target.View(h.now), h.f.View(h.now)) {
		t.Fatal("restored FSM's scheduler view differs: caches were not rebuilt")
	}
	rep, err := target.Verify()
	if err != nil || rep.Entries == 0 {
		t.Fatalf("journal of the restored FSM does not verify: %v (%d entries)", err, rep.Entries)
	}
	// The restored state, and what was applied on it, is the state file
	// in the data dir: a restart reads it back.
	want = digestOf(t, target)
	if err := target.Close(); err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, openFSM(t, th.dir)); got != want {
		t.Fatal("after a restart the restored FSM's state differs from what it held")
	}
}

// A snapshot that is not a longfair state is refused and leaves the current
// state untouched.
func TestRestoreRejectsGarbage(t *testing.T) {
	h := newWorkload(t, 5).run(50)
	want := digestOf(t, h.f)
	sink := &memSink{}
	sink.Write([]byte("this is not a bbolt file"))
	if err := h.f.Restore(sink.reader()); err == nil {
		t.Fatal("a garbage snapshot was restored")
	}
	if digestOf(t, h.f) != want {
		t.Fatal("a failed restore changed the state")
	}
	h.ok(&CreateAccount{Name: "after"}) // and the FSM still applies
}

var _ raft.SnapshotSink = (*memSink)(nil)
