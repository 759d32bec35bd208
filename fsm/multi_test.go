package fsm

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// rawMulti builds a multi-command entry from any parts, without
// EncodeMulti's checks, the way a buggy or hostile leader could.
func rawMulti(parts [][]byte) []byte {
	buf := []byte{MultiVersion}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(parts)))
	for _, p := range parts {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(p)))
		buf = append(buf, p...)
	}
	return buf
}

// grouped rewrites a log into multi-command entries of the sizes in sizes
// (cycled), in the same order; an entry that is itself a multi-command
// entry stays alone. It returns the new log and, for each new entry, the
// positions of the old entries it holds.
func grouped(l *log, sizes []int) (*log, [][]int) {
	out := &log{}
	var groups [][]int
	for i, k := 0, 0; i < len(l.entries); k++ {
		var parts [][]byte
		var group []int
		for ; i < len(l.entries) && len(parts) < sizes[k%len(sizes)]; i++ {
			if IsMulti(l.entries[i].Data) {
				if len(parts) == 0 {
					out.addRaw(l.entries[i].Data)
					groups = append(groups, []int{i})
					i++
				}
				break
			}
			parts = append(parts, l.entries[i].Data)
			group = append(group, i)
		}
		if len(parts) > 0 {
			out.addRaw(rawMulti(parts))
			groups = append(groups, group)
		}
	}
	return out, groups
}

// flatten turns the responses to a grouped log back into one *Result per
// original entry, with the log index cleared (a multi-command entry has one
// index for all its commands).
func flatten(t testing.TB, responses []any) []*Result {
	t.Helper()
	var out []*Result
	for _, resp := range responses {
		switch r := resp.(type) {
		case *Result:
			c := *r
			c.Index = 0
			out = append(out, &c)
		case Results:
			for _, x := range r {
				c := *x
				c.Index = 0
				out = append(out, &c)
			}
		default:
			t.Fatalf("response %T", resp)
		}
	}
	return out
}

// A multi-command entry applies exactly as its commands would as
// consecutive entries: the same answers and the same state, on every
// replica, however raft batches the entries.
func TestMultiEntryAppliesLikeConsecutiveEntries(t *testing.T) {
	for _, seed := range []uint64{4, 5} {
		w := newWorkload(t, seed)
		h := w.run(300)
		single := replay(t, openFSM(t, t.TempDir()), h.log, []int{1})

		multiLog, _ := grouped(h.log, []int{1, 5, 64, 2, 17})
		if len(multiLog.entries) >= len(h.log.entries)/4 {
			t.Fatalf("seed %d: grouping left %d of %d entries", seed, len(multiLog.entries), len(h.log.entries))
		}
		a := openFSM(t, t.TempDir())
		b := openFSM(t, t.TempDir())
		ra := replay(t, a, multiLog, []int{1})
		rb := replay(t, b, multiLog, []int{3, 1, 8})

		if digestOf(t, a) != digestOf(t, b) {
			t.Fatalf("seed %d: replicas applying the same multi-command log differ", seed)
		}
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("seed %d: replicas answer the multi-command log differently", seed)
		}
		if stateDigest(t, a) != stateDigest(t, h.f) {
			t.Fatalf("seed %d: state after multi-command entries differs from the same commands one per entry", seed)
		}
		if !reflect.DeepEqual(a.View(h.now), h.f.View(h.now)) {
			t.Fatalf("seed %d: scheduler views differ", seed)
		}
		got, want := flatten(t, ra), flatten(t, single)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d answers for %d commands", seed, len(got), len(want))
		}
		refused := 0
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("seed %d command %d: answer in a multi-command entry\n%#v\ndiffers from alone\n%#v", seed, i, got[i], want[i])
			}
			if want[i].Err != nil {
				refused++
			}
		}
		if refused == 0 || refused == len(want) {
			t.Fatalf("seed %d: %d of %d commands refused; the workload should mix both", seed, refused, len(want))
		}
	}
}

// A refused command in the middle of a multi-command entry changes
// nothing, while the commands around it apply — including refusals that
// depend on what an earlier command of the same entry did.
func TestRefusedCommandInMultiEntryChangesNothing(t *testing.T) {
	ok1 := job(func(j *SubmitJob) { j.Name = "before"; j.RequestID = "rq-before" })
	ok2 := job(func(j *SubmitJob) { j.Name = "after"; j.Tasks = 2 })
	cases := []struct {
		name   string
		middle func(testing.TB, ledger.Time) []byte
		code   Kind
	}{
		{"unknown account", cmd(job(func(j *SubmitJob) { j.Account = "bio" })), KindNotFound},
		{"not a member", cmd(job(func(j *SubmitJob) { j.Account = "chem" })), KindPermission},
		{"unknown resource", cmd(job(func(j *SubmitJob) { j.Demand = map[string]float64{"gpu": 1} })), KindInvalid},
		// 92 SU are free before the entry; the first command holds 1.
		{"too expensive after the first hold", cmd(job(func(j *SubmitJob) { j.Tasks = 92 })), KindInsufficientFunds},
		{"request id reused by the first command", cmd(job(func(j *SubmitJob) { j.RequestID = "rq-before"; j.Tasks = 3 })), KindExists},
		{"malformed body", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(CommandVersion, TypeSubmitJob, at, `{"account":`)
		}, KindInvalid},
		{"unknown version", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(9, TypeSubmitJob, at, `{}`)
		}, KindPrecondition},
		{"short", func(testing.TB, ledger.Time) []byte { return []byte{1, 8} }, KindInvalid},
		{"cancel of an ended job", cmd(&CancelJob{JobID: 2}), KindNone},
		{"cancel of an unknown job", cmd(&CancelJob{JobID: 77}), KindNotFound},
		{"bad grant", cmd(&Grant{Account: "phys", Amount: -5}), KindInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			with, without := busyHarness(t), busyHarness(t)
			at := with.now.Add(time.Second)
			parts := [][]byte{rawCommand(t, at, ok1), c.middle(t, at), rawCommand(t, at, ok2)}
			resp := with.f.Apply(with.log.addRaw(rawMulti(parts)))
			rs, ok := resp.(Results)
			if !ok || len(rs) != 3 {
				t.Fatalf("response %#v, want three results", resp)
			}
			if rs[0].Err != nil || rs[2].Err != nil {
				t.Fatalf("neighbours refused: %v, %v", rs[0].Err, rs[2].Err)
			}
			if c.code == KindNone {
				// Cancelling a cancelled job answers it unchanged.
				if rs[1].Err != nil {
					t.Fatalf("middle refused: %v", rs[1].Err)
				}
			} else if KindOf(rs[1].Err) != c.code {
				t.Fatalf("middle answered %v (%v), want %v", KindOf(rs[1].Err), rs[1].Err, c.code)
			}
			first, _ := Response[JobInfo](rs[0])
			last, _ := Response[JobInfo](rs[2])
			if first.Name != "before" || last.Name != "after" || last.ID != first.ID+1 {
				t.Fatalf("neighbours applied as %+v and %+v", first, last)
			}

			without.f.Apply(without.log.addRaw(rawMulti([][]byte{parts[0], parts[2]})))
			if stateDigest(t, with.f) != stateDigest(t, without.f) {
				t.Fatal("the refused command left a trace in the stored state")
			}
			later := at.Add(time.Hour)
			if !reflect.DeepEqual(with.f.View(later), without.f.View(later)) {
				t.Fatal("the refused command left a trace in the in-memory state")
			}
			// What is in memory is what is stored: a restart reads the same.
			if err := with.f.Close(); err != nil {
				t.Fatal(err)
			}
			if stateDigest(t, openFSM(t, with.dir)) != stateDigest(t, without.f) {
				t.Fatal("the state differs after a restart")
			}
		})
	}
}

// Request ids keep a submission idempotent inside one multi-command entry
// and across entries: a repeat returns the first job and holds nothing
// more; a different job under a used id is refused.
func TestMultiEntryIdempotentSubmit(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	sub := job(func(j *SubmitJob) { j.RequestID = "r-1"; j.Tasks = 3 })
	other := job(func(j *SubmitJob) { j.RequestID = "r-1"; j.Tasks = 4 })
	resp := h.f.Apply(h.log.addRaw(rawMulti([][]byte{
		rawCommand(t, h.now, sub), rawCommand(t, h.now, sub), rawCommand(t, h.now, other),
	})))
	rs := resp.(Results)
	a, errA := Response[JobInfo](rs[0])
	b, errB := Response[JobInfo](rs[1])
	if errA != nil || errB != nil || a.ID != b.ID {
		t.Fatalf("repeat in one entry: %+v %v, %+v %v", a, errA, b, errB)
	}
	if KindOf(rs[2].Err) != KindExists {
		t.Fatalf("a different job under a used request id: %v", rs[2].Err)
	}
	heldOnce := balance(t, h)

	h.now = h.now.Add(time.Minute)
	resp = h.f.Apply(h.log.addRaw(rawMulti([][]byte{rawCommand(t, h.now, sub)})))
	c, err := Response[JobInfo](resp.(Results)[0])
	if err != nil || c.ID != a.ID {
		t.Fatalf("repeat in a later entry: %+v %v", c, err)
	}
	if got := balance(t, h); got != heldOnce {
		t.Fatalf("balance %+v after a repeat, want %+v", got, heldOnce)
	}

	// The same three commands one per entry give the same balance.
	ref := newHarness(t)
	ref.setup(100)
	for _, c := range []Command{sub, sub, other, sub} {
		ref.apply(c)
	}
	if got := balance(t, ref); got != heldOnce {
		t.Fatalf("one per entry: balance %+v, in multi-command entries %+v", got, heldOnce)
	}
	if _, err := h.f.Job(a.ID + 1); err == nil {
		t.Fatal("a repeat created a second job")
	}
}

// A multi-command entry that cannot be split is refused whole, with a
// message, and changes nothing.
func TestMalformedMultiEntryIsRefused(t *testing.T) {
	good := rawCommand(t, t0, &CreateAccount{Name: "x"})
	short := rawMulti([][]byte{good})
	short = short[:len(short)-1]
	cases := map[string][]byte{
		"no commands":      rawMulti(nil),
		"header only":      {MultiVersion, 0, 0},
		"truncated":        short,
		"trailing bytes":   append(rawMulti([][]byte{good}), 0),
		"nested":           rawMulti([][]byte{good, rawMulti([][]byte{good})}),
		"count too large":  binary.BigEndian.AppendUint32([]byte{MultiVersion}, MaxMultiCommands+1),
		"count past bytes": binary.BigEndian.AppendUint32([]byte{MultiVersion}, 1000),
	}
	h := busyHarness(t)
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			before := stateDigest(t, h.f)
			resp := h.f.Apply(h.log.addRaw(data))
			r, ok := resp.(*Result)
			if !ok || KindOf(r.Err) != KindInvalid || r.Err.Error() == "" {
				t.Fatalf("response %#v, want one InvalidArgument refusal", resp)
			}
			if stateDigest(t, h.f) != before {
				t.Fatal("a refused entry changed the state")
			}
		})
	}
}

// EncodeMulti writes what SplitMulti reads back, and refuses what the FSM
// would refuse.
func TestEncodeMulti(t *testing.T) {
	var entries [][]byte
	for i := range 3 {
		e, err := Encode(t0+ledger.Time(i), &CreateAccount{Name: fmt.Sprintf("a%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	data, err := EncodeMulti(entries)
	if err != nil {
		t.Fatal(err)
	}
	if !IsMulti(data) || IsMulti(entries[0]) {
		t.Fatal("IsMulti does not tell the envelopes apart")
	}
	parts, err := SplitMulti(data)
	if err != nil || !reflect.DeepEqual(parts, entries) {
		t.Fatalf("split %q, %v; want %q", parts, err, entries)
	}
	if _, err := Decode(data); KindOf(err) != KindInvalid {
		t.Fatalf("Decode of a multi-command entry: %v", err)
	}
	for name, bad := range map[string][][]byte{
		"empty":    nil,
		"nested":   {entries[0], data},
		"short":    {entries[0], {1, 2}},
		"too many": make([][]byte, MaxMultiCommands+1),
		"too big":  {entries[0], append(append([]byte{}, entries[0][:envelopeHeader]...), make([]byte, MaxCommandBytes)...)},
	} {
		if _, err := EncodeMulti(bad); KindOf(err) != KindInvalid {
			t.Errorf("%s: EncodeMulti gave %v, want InvalidArgument", name, err)
		}
	}
}

// A command that panics inside a multi-command entry is refused alone, the
// same way on every server; its neighbours apply.
func TestPanickingCommandInMultiEntry(t *testing.T) {
	boom := func(c Command) {
		if a, ok := c.(*CreateAccount); ok && (a.Name == "boom" || a.Name == "bang") {
			panic("injected bug " + a.Name)
		}
	}
	var parts [][]byte
	for _, name := range []string{"a", "boom", "b", "bang", "c"} {
		parts = append(parts, rawCommand(t, t0, &CreateAccount{Name: name}))
	}
	l := &log{}
	l.add(t, t0, &CreateAccount{Name: "first"})
	l.addRaw(rawMulti(parts))
	l.add(t, t0, &CreateAccount{Name: "last"})
	var digests [][32]byte
	for range 2 {
		f := openFSM(t, t.TempDir())
		f.hook = boom
		out := f.ApplyBatch(l.entries)
		rs := out[1].(Results)
		for i, want := range []Kind{KindNone, KindInternal, KindNone, KindInternal, KindNone} {
			if KindOf(rs[i].Err) != want {
				t.Fatalf("command %d answered %v, want %v", i, rs[i].Err, want)
			}
		}
		for _, name := range []string{"first", "a", "b", "c", "last"} {
			if _, err := f.Account(name); err != nil {
				t.Fatalf("account %s missing: %v", name, err)
			}
		}
		for _, name := range []string{"boom", "bang"} {
			if _, err := f.Account(name); err == nil {
				t.Fatalf("the panicking command left account %s behind", name)
			}
		}
		if f.Err() != nil {
			t.Fatal(f.Err())
		}
		digests = append(digests, digestOf(t, f))
	}
	if digests[0] != digests[1] {
		t.Fatal("servers disagree after a panicking command")
	}
}

// Watchers hear the types of every command of a multi-command entry.
func TestWatcherSeesMultiEntryCommands(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	w := h.f.Watch()
	defer w.Close()
	h.f.Apply(h.log.addRaw(rawMulti([][]byte{
		rawCommand(t, h.now, job(func(*SubmitJob) {})),
		rawCommand(t, h.now, &CancelJob{JobID: 1}),
	})))
	c := w.Take()
	if !c.Has(TypeSubmitJob) || !c.Has(TypeCancelJob) || c.Has(TypeGrant) {
		t.Fatalf("changes %b, want submit-job and cancel-job only", c)
	}
}

// The FSM's time stays non-decreasing inside a multi-command entry whose
// commands carry stamps out of order (callers stamp before they queue).
func TestMultiEntryTimeNeverGoesBack(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	r := rand.New(rand.NewPCG(1, 2))
	var parts [][]byte
	for i := range 20 {
		at := h.now.Add(time.Duration(r.IntN(60)-30) * time.Second)
		parts = append(parts, rawCommand(t, at, &CreateAccount{Name: fmt.Sprintf("t%d", i)}))
	}
	rs := h.f.Apply(h.log.addRaw(rawMulti(parts))).(Results)
	last := h.now
	for i, x := range rs {
		if x.Err != nil || x.Time < last {
			t.Fatalf("command %d: time %v after %v (err %v)", i, x.Time, last, x.Err)
		}
		last = x.Time
	}
	if h.f.Now() != last {
		t.Fatalf("FSM time %v, last command's %v", h.f.Now(), last)
	}
}

// A multi-command entry through a real raft node: one log index, one
// answer per command, and after a restart nothing is applied twice (grants
// without ids would credit again).
func TestMultiEntryThroughRaft(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir, true)
	var entries [][]byte
	for _, c := range []Command{
		&CreateAccount{Name: "phys"}, &CreateAccount{Name: "phys"},
		&Grant{Account: "phys", Amount: 5 * su}, &Grant{Account: "phys", Amount: 7 * su},
	} {
		e, err := Encode(t0, c)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	data, err := EncodeMulti(entries)
	if err != nil {
		t.Fatal(err)
	}
	fut := n.raft.Apply(data, 5*time.Second)
	if err := fut.Error(); err != nil {
		t.Fatal(err)
	}
	rs, ok := fut.Response().(Results)
	if !ok || len(rs) != 4 || rs[0].Err != nil || KindOf(rs[1].Err) != KindExists || rs[2].Err != nil || rs[3].Err != nil {
		t.Fatalf("response %#v", fut.Response())
	}
	for _, r := range rs {
		if r.Index != fut.Index() {
			t.Fatalf("a result carries index %d; the entry's is %d", r.Index, fut.Index())
		}
	}
	digest := stateDigest(t, n.fsm)
	n.stop(t)

	n = startNode(t, dir, false)
	defer n.stop(t)
	if err := n.raft.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if got, _ := n.fsm.AppliedIndex(); got < fut.Index() {
		t.Fatalf("applied index %d after restart, the entry was %d", got, fut.Index())
	}
	if b, _ := n.fsm.Balance("phys", 0); b.Granted != 12*su {
		t.Fatalf("granted %v after restart, want 12 SU: commands were applied twice", b.Granted)
	}
	if stateDigest(t, n.fsm) != digest {
		t.Fatal("the state changed across the restart")
	}
}
