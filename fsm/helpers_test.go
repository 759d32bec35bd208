package fsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// t0 is the start of every test's timeline: an arbitrary fixed instant, so
// tests never read the clock.
const t0 = ledger.Time(1_700_000_000 * int64(time.Second))

// log is a raft log the tests feed to FSMs: the same entries can be applied
// to several FSMs, in batches of any size.
type log struct {
	entries []*raft.Log
}

// add appends a command stamped at time at and returns its entry.
func (l *log) add(t testing.TB, at ledger.Time, cmd Command) *raft.Log {
	t.Helper()
	data, err := Encode(at, cmd)
	if err != nil {
		t.Fatalf("encode %T: %v", cmd, err)
	}
	return l.addRaw(data)
}

// addRaw appends arbitrary bytes as a command entry.
func (l *log) addRaw(data []byte) *raft.Log {
	e := &raft.Log{Index: uint64(len(l.entries) + 1), Term: 1, Type: raft.LogCommand, Data: data}
	l.entries = append(l.entries, e)
	return e
}

// harness is one FSM and the log it applies.
type harness struct {
	t   testing.TB
	f   *FSM
	dir string
	log *log
	now ledger.Time
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	dir := t.TempDir()
	f, err := Open(Options{Dir: dir, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &harness{t: t, f: f, dir: dir, log: &log{}, now: t0}
}

// at moves the harness clock to t0+d.
func (h *harness) at(d time.Duration) *harness {
	h.now = t0.Add(d)
	return h
}

// apply proposes one command and returns its result.
func (h *harness) apply(cmd Command) *Result {
	h.t.Helper()
	e := h.log.add(h.t, h.now, cmd)
	resp := h.f.Apply(e)
	r, ok := resp.(*Result)
	if !ok {
		h.t.Fatalf("apply %T: response %T", cmd, resp)
	}
	return r
}

// ok applies a command that must succeed and returns its value.
func (h *harness) ok(cmd Command) any {
	h.t.Helper()
	r := h.apply(cmd)
	if r.Err != nil {
		h.t.Fatalf("%s refused: %v", cmd.Type(), r.Err)
	}
	return r.Value
}

func f64(x float64) *float64 { return &x }

// setup creates account "phys" (with user "ann" and a grant of sus SU) and
// one up node "n1" with 8 cpu, 32 mem, 0 mic.
func (h *harness) setup(sus ledger.SU) {
	h.t.Helper()
	h.ok(&CreateAccount{Name: "phys"})
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	h.ok(&Grant{ID: "g1", Account: "phys", Amount: sus * ledger.MicroPerSU})
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
}

// editStateFile closes f and changes its state file as edit does, in one
// bbolt update: what an older release, a downgrade or damage left behind.
// The caller opens the file again.
func editStateFile(t testing.TB, f *FSM, edit func(tx *bolt.Tx) error) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(f.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(edit)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// indexDamages are the ways a state file can lack derived index bucket
// (entries entryLen long): no index at all (written before it existed,
// or restored from a snapshot taken then), or its last entry missing with
// its mark one entry back (a downgrade: an older release applied an entry
// without indexing it).
func indexDamages(bucket []byte, entryLen int) map[string]func(tx *bolt.Tx) error {
	return map[string]func(tx *bolt.Tx) error{
		"no index": func(tx *bolt.Tx) error { return tx.DeleteBucket(bucket) },
		"index behind": func(tx *bolt.Tx) error {
			idx := tx.Bucket(bucket)
			c := idx.Cursor()
			k, _ := c.Last()
			if len(k) != entryLen {
				return fmt.Errorf("%s has no entry to drop", bucket)
			}
			if err := c.Delete(); err != nil {
				return err
			}
			return idx.SetSequence(idx.Sequence() - 1)
		},
	}
}
