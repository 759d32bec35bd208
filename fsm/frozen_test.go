package fsm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// Frozen fixtures (see "Frozen fixtures" in doc.go): raft log entries and a
// snapshot written by a past release, which every later release must
// decode and apply to the same state, byte for byte (Digest). They are
// what makes "never renumber a command, never change how an old entry
// applies" a test rather than a comment.

// updateFrozen writes a new fixture set, frozenSet, from today's code. It
// never rewrites an existing set.
var updateFrozen = flag.Bool("update-frozen", false, "write the frozen fixture set "+frozenSet+" under testdata/frozen (never rewrites an existing set)")

// frozenSet is the name of the set the generator writes: the month it was
// frozen and the newest command version it holds. A release that adds a
// command type or version extends buildFrozenLog and renames this constant, so
// that the next -update-frozen adds a set beside the old ones.
const frozenSet = "2026-11-v5"

const frozenDir = "testdata/frozen"

// Files of a fixture set.
const (
	frozenLogFile      = "log.txt"
	frozenSnapshotFile = "snapshot.db.gz"
	frozenStateFile    = "state.txt"
)

// TestFrozenFixtures applies every frozen set's entries to a fresh FSM and
// checks each entry decodes to the command it was written as, is applied
// or refused as it was then, and that the state ends byte for byte as it
// was (Digest, every record of every bucket). It restores the set's
// snapshot, checks its digest, and applies the entries after it to the
// same final state.
func TestFrozenFixtures(t *testing.T) {
	if *updateFrozen {
		writeFrozenSet(t, filepath.Join(frozenDir, frozenSet))
	}
	sets, err := os.ReadDir(frozenDir)
	if err != nil {
		t.Fatalf("read %s: %v", frozenDir, err)
	}
	n := 0
	for _, s := range sets {
		if !s.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(frozenDir, s.Name())
		t.Run(s.Name(), func(t *testing.T) { checkFrozenSet(t, dir) })
	}
	if n == 0 {
		t.Fatalf("no frozen fixture set under %s: the log format is unguarded", frozenDir)
	}
}

func checkFrozenSet(t *testing.T, dir string) {
	fx := readFrozenLog(t, filepath.Join(dir, frozenLogFile))

	t.Run("log", func(t *testing.T) {
		f := openFrozenFSM(t)
		// Batches of a few entries, as raft hands them over: the state
		// must not depend on how the log was cut into batches.
		for start := 0; start < len(fx.entries); start += 5 {
			applyFrozen(t, f, fx.entries[start:min(start+5, len(fx.entries))])
		}
		checkFrozenDigest(t, f, fx.final, filepath.Join(dir, frozenStateFile), "the frozen log applied")
	})

	t.Run("snapshot", func(t *testing.T) {
		f := openFrozenFSM(t)
		snap, err := readGzip(filepath.Join(dir, frozenSnapshotFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
			t.Fatalf("the frozen snapshot no longer restores: %v", err)
		}
		if idx, _ := f.AppliedIndex(); idx != uint64(fx.snapshotAt) {
			t.Fatalf("the frozen snapshot restores at applied index %d, frozen at %d", idx, fx.snapshotAt)
		}
		got := frozenDigest(t, f)
		if got != fx.snapshot {
			t.Fatalf("the frozen snapshot restores to digest %x, frozen as %x: the state's records are read or rebuilt differently", got, fx.snapshot)
		}
		// The entries after the snapshot apply on top of it to the final
		// state, as on a follower that installed it.
		var rest []frozenEntry
		for _, e := range fx.entries {
			if e.log.Index > uint64(fx.snapshotAt) {
				rest = append(rest, e)
			}
		}
		applyFrozen(t, f, rest)
		checkFrozenDigest(t, f, fx.final, filepath.Join(dir, frozenStateFile), "the frozen snapshot and the entries after it")
	})
}

// frozenEntry is one raft log entry of a set, with what it was frozen as:
// the command types it holds and whether each applied ("ok") or was
// refused.
type frozenEntry struct {
	log      raft.Log
	version  string
	types    []string
	outcomes []string
}

type frozenLog struct {
	entries    []frozenEntry
	snapshotAt int
	snapshot   [32]byte
	final      [32]byte
}

func openFrozenFSM(t *testing.T) *FSM {
	t.Helper()
	f, err := Open(Options{Dir: t.TempDir(), noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// applyFrozen applies entries in one batch and checks each decodes to the
// types it was frozen as and is applied or refused as it was then.
func applyFrozen(t *testing.T, f *FSM, entries []frozenEntry) {
	t.Helper()
	logs := make([]*raft.Log, len(entries))
	for i := range entries {
		logs[i] = &entries[i].log
	}
	resp := f.ApplyBatch(logs)
	for i, e := range entries {
		version, types := describeEntry(&e.log)
		if version != e.version || !slices.Equal(types, e.types) {
			t.Errorf("entry %d was frozen as %s %v and decodes as %s %v: a command type or version was renumbered or removed — never renumber (command.go)",
				e.log.Index, e.version, e.types, version, types)
			continue
		}
		if got := outcomes(resp[i]); !slices.Equal(got, e.outcomes) {
			t.Errorf("entry %d (%s %v) was %v when frozen and is %v now (%s): an old entry must apply as it did when it was written",
				e.log.Index, e.version, e.types, e.outcomes, got, refusals(resp[i]))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// describeEntry names an entry's envelope version and the types of its
// commands, from its bytes alone.
func describeEntry(l *raft.Log) (string, []string) {
	if l.Type != raft.LogCommand {
		return "cfg", []string{"-"}
	}
	if IsMulti(l.Data) {
		parts, err := SplitMulti(l.Data)
		if err != nil {
			return "v2", []string{"unsplittable"}
		}
		var types []string
		for _, p := range parts {
			types = append(types, fmt.Sprintf("v%d:%s", p[0], CommandType(p[1])))
		}
		return "v2", types
	}
	if len(l.Data) < envelopeHeader {
		return "short", nil
	}
	return fmt.Sprintf("v%d", l.Data[0]), []string{CommandType(l.Data[1]).String()}
}

// outcomes is "ok" or "refused" for each command of an entry's response.
func outcomes(resp any) []string {
	one := func(r *Result) string {
		if r == nil || r.Err != nil {
			return "refused"
		}
		return "ok"
	}
	switch r := resp.(type) {
	case nil:
		return []string{"-"}
	case *Result:
		return []string{one(r)}
	case Results:
		out := make([]string, len(r))
		for i, x := range r {
			out[i] = one(x)
		}
		return out
	}
	return []string{fmt.Sprintf("%T", resp)}
}

// refusals are the errors of an entry's response, for failure messages.
func refusals(resp any) string {
	var errs []string
	switch r := resp.(type) {
	case *Result:
		if r.Err != nil {
			errs = append(errs, r.Err.Error())
		}
	case Results:
		for _, x := range r {
			if x.Err != nil {
				errs = append(errs, x.Err.Error())
			}
		}
	}
	if len(errs) == 0 {
		return "no refusal"
	}
	return strings.Join(errs, "; ")
}

// frozenDigest is Digest, after checking that the state holds no nested
// bucket, whose records Digest would not see: the fixtures compare every
// record there is.
func frozenDigest(t *testing.T, f *FSM) [32]byte {
	t.Helper()
	err := f.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("bucket %q holds a nested bucket %q, which Digest does not cover: extend digestTx before freezing it", name, k)
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkFrozenDigest compares f's digest with want and, when they differ,
// names the records that differ from the frozen dump.
func checkFrozenDigest(t *testing.T, f *FSM, want [32]byte, dumpPath, what string) {
	t.Helper()
	got := frozenDigest(t, f)
	if got == want {
		return
	}
	frozen, err := os.ReadFile(dumpPath)
	if err != nil {
		t.Fatalf("%s ends at digest %x, frozen as %x (and the dump cannot be read: %v)", what, got, want, err)
	}
	now := dumpState(t, f)
	t.Fatalf("%s ends at digest %x, frozen as %x: an old entry no longer applies as it did. Records that differ (- frozen, + now):\n%s",
		what, got, want, diffLines(string(frozen), now, 30))
}

// dumpState is every record of every bucket, one a line, for a reviewer
// and for naming what differs when a digest does.
func dumpState(t *testing.T, f *FSM) string {
	t.Helper()
	var sb strings.Builder
	err := f.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			// The bucket's own line: Digest covers bucket names too, so a
			// bucket a release adds shows here even while it is empty.
			fmt.Fprintf(&sb, "%s (bucket)\n", name)
			return b.ForEach(func(k, v []byte) error {
				fmt.Fprintf(&sb, "%s %s %s\n", name, showBytes(k), showBytes(v))
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// showBytes prints JSON and text as they are, anything else in hex.
func showBytes(b []byte) string {
	if json.Valid(b) && !bytes.ContainsAny(b, "\n\r") {
		return string(b)
	}
	if utf8.Valid(b) && strconv.CanBackquote(string(b)) && len(b) > 0 {
		return strconv.Quote(string(b))
	}
	return "0x" + hex.EncodeToString(b)
}

func diffLines(a, b string, limit int) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("… and %d more", len(out)-limit))
	}
	return strings.Join(out, "\n")
}

// readFrozenLog reads a set's log.txt:
//
//	entry <index> <term> <version> <type:outcome,…> <hex bytes>
//	snapshot <index> <digest>
//	final <index> <digest>
//
// "version" is v1, v2 (with the version of each command in its types),
// v3, or cfg for a raft configuration entry.
func readFrozenLog(t *testing.T, path string) frozenLog {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var fx frozenLog
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, MaxCommandBytes*2+1024)
	line := 0
	bad := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		switch fields[0] {
		case "entry":
			if len(fields) != 6 {
				bad("an entry line has 6 fields, this one %d", len(fields))
			}
			index, err1 := strconv.ParseUint(fields[1], 10, 64)
			term, err2 := strconv.ParseUint(fields[2], 10, 64)
			data, err3 := hex.DecodeString(strings.TrimPrefix(fields[5], "-"))
			if err := errors.Join(err1, err2, err3); err != nil {
				bad("%v", err)
			}
			e := frozenEntry{log: raft.Log{Index: index, Term: term, Type: raft.LogCommand, Data: data}, version: fields[3]}
			if e.version == "cfg" {
				e.log.Type = raft.LogConfiguration
			}
			for _, tc := range strings.Split(fields[4], ",") {
				i := strings.LastIndex(tc, ":")
				if i < 0 {
					bad("%q is not type:outcome", tc)
				}
				e.types = append(e.types, tc[:i])
				e.outcomes = append(e.outcomes, tc[i+1:])
			}
			if n := len(fx.entries); n > 0 && fx.entries[n-1].log.Index+1 != index {
				bad("entry %d follows entry %d", index, fx.entries[n-1].log.Index)
			}
			fx.entries = append(fx.entries, e)
		case "snapshot", "final":
			if len(fields) != 3 {
				bad("a %s line has 3 fields", fields[0])
			}
			index, err := strconv.Atoi(fields[1])
			if err != nil {
				bad("%v", err)
			}
			d, err := ParseDigest(fields[2])
			if err != nil {
				bad("%v", err)
			}
			if fields[0] == "snapshot" {
				fx.snapshotAt, fx.snapshot = index, d
			} else {
				fx.final = d
			}
		default:
			bad("unknown line %q", fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(fx.entries) == 0 || fx.snapshotAt == 0 || fx.final == ([32]byte{}) {
		t.Fatalf("%s: a set needs entries, a snapshot line and a final line", path)
	}
	return fx
}

func readGzip(path string) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	zr, err := gzip.NewReader(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(zr)
}

// The generator.

// freezer applies entries as it builds them, so that it records how each
// one applied, and refuses to freeze an entry that does not apply as the
// generator meant it to.
type freezer struct {
	t       *testing.T
	f       *FSM
	entries []frozenEntry
	term    uint64
}

func (z *freezer) at(d time.Duration) ledger.Time { return t0.Add(d) }

// v4 is an entry as today's leader writes it.
func (z *freezer) v4(d time.Duration, c Command) []byte {
	z.t.Helper()
	data, err := Encode(z.at(d), c)
	if err != nil {
		z.t.Fatalf("encode %T: %v", c, err)
	}
	return data
}

// v3 is an entry as a release of command version 3 wrote it: the same
// body, under version 3.
func (z *freezer) v3(d time.Duration, c Command) []byte {
	data := z.v4(d, c)
	data[0] = wholeUnitsVersion
	return data
}

// v1 is an entry as a release of the first command version wrote it: the
// same JSON body under version 1.
func (z *freezer) v1(d time.Duration, c Command) []byte {
	z.t.Helper()
	body, err := json.Marshal(c)
	if err != nil {
		z.t.Fatal(err)
	}
	return rawEntry(legacyVersion, c.Type(), z.at(d), string(body))
}

// multi joins entries into a version-2 entry by its documented layout
// (multi.go), so that it may hold version-1 entries, as the logs of
// releases before version 3 did; EncodeMulti writes only today's.
func multiEntry(parts ...[]byte) []byte {
	buf := []byte{MultiVersion}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(parts)))
	for _, p := range parts {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(p)))
		buf = append(buf, p...)
	}
	return buf
}

// add appends an entry, applies it, and checks it applied (want "ok") or
// was refused ("refused") command by command.
func (z *freezer) add(data []byte, want ...string) {
	z.t.Helper()
	z.addLog(raft.Log{Type: raft.LogCommand, Data: data}, want...)
}

func (z *freezer) addLog(l raft.Log, want ...string) {
	z.t.Helper()
	l.Index, l.Term = uint64(len(z.entries)+1), z.term
	resp := z.f.Apply(&l)
	got := outcomes(resp)
	if !slices.Equal(got, want) {
		z.t.Fatalf("generator: entry %d applied %v, meant %v (%s)", l.Index, got, want, refusals(resp))
	}
	version, types := describeEntry(&l)
	z.entries = append(z.entries, frozenEntry{log: l, version: version, types: types, outcomes: got})
}

// writeFrozenSet builds the frozen log from today's code and writes it,
// its snapshot, digests and state dump to dir, which must not exist.
func writeFrozenSet(t *testing.T, dir string) {
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s exists: frozen sets are never rewritten. To freeze today's format, extend buildFrozenLog and rename frozenSet (doc.go, Frozen fixtures)", dir)
	}
	z := &freezer{t: t, f: openFrozenFSM(t), term: 1}
	snapshotAt := buildFrozenLog(z)
	final := frozenDigest(t, z.f)

	// The snapshot is of the state after entry snapshotAt: build it again
	// up to there, in a second FSM.
	g := openFrozenFSM(t)
	for i := range snapshotAt {
		g.Apply(&z.entries[i].log)
	}
	snapDigest := frozenDigest(t, g)
	sink := snapshotOf(t, g)

	var sb strings.Builder
	fmt.Fprintf(&sb, "# Frozen raft log %s: written by `go test ./fsm -run TestFrozenFixtures -update-frozen`.\n", frozenSet)
	sb.WriteString("# NEVER edit or regenerate: every later release must decode and apply these bytes to the same state (fsm/doc.go).\n")
	sb.WriteString("# entry <index> <term> <version> <type:outcome,…> <hex>; snapshot and final: <index> <Digest>.\n")
	for _, e := range z.entries {
		tc := make([]string, len(e.types))
		for i := range e.types {
			tc[i] = e.types[i] + ":" + e.outcomes[i]
		}
		data := hex.EncodeToString(e.log.Data)
		if data == "" {
			data = "-"
		}
		fmt.Fprintf(&sb, "entry %d %d %s %s %s\n", e.log.Index, e.log.Term, e.version, strings.Join(tc, ","), data)
	}
	fmt.Fprintf(&sb, "snapshot %d %x\n", snapshotAt, snapDigest)
	fmt.Fprintf(&sb, "final %d %x\n", len(z.entries), final)

	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(sink.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		frozenLogFile:      []byte(sb.String()),
		frozenSnapshotFile: gz.Bytes(),
		frozenStateFile:    []byte(dumpState(t, z.f)),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %s: %d entries, snapshot at %d (%d bytes)", dir, len(z.entries), snapshotAt, sink.Len())
}

// buildFrozenLog is a small cluster's history that uses every command type in
// every envelope version the FSM reads: version 1 (legacyVersion), version
// 2 (MultiVersion, holding version-1 and version-3 commands), version 3
// (wholeUnitsVersion) and version 4 (CommandVersion), with refusals each
// version's rules make and what each version applies its own way. It returns
// the index the snapshot is taken at.
func buildFrozenLog(z *freezer) int {
	const (
		ok      = "ok"
		refused = "refused"
	)
	mn := time.Minute
	gib := float64(1 << 30)

	// Version 1: the first release's log. Its demands and capacities are
	// not whole units, and its rules predate core's text rule and the
	// walltime minimum.
	z.add(z.v1(0, &CreateAccount{Name: "phys", Weight: f64(1)}), ok)
	z.add(z.v1(1*mn, &CreateAccount{Name: "chem", Weight: f64(2), Contribution: f64(0.25)}), ok)
	z.add(z.v1(2*mn, &CreateUser{Name: "ann", Accounts: []string{"phys"}}), ok)
	z.add(z.v1(3*mn, &CreateUser{Name: "bob", Accounts: []string{"chem"}}), ok)
	z.add(z.v1(4*mn, &AddMembership{User: "bob", Account: "phys"}), ok)
	z.add(z.v1(5*mn, &Grant{ID: "g1", Account: "phys", Amount: 1000 * ledger.MicroPerSU, Note: "start-up"}), ok)
	z.add(z.v1(6*mn, &Grant{Account: "chem", Amount: 500 * ledger.MicroPerSU, Expires: z.at(1000 * time.Hour)}), ok)
	z.add(z.v1(7*mn, &NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 16.505, "mem": 64*gib + 12345}, Class: "std"}), ok)
	z.add(z.v1(8*mn, &NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 * gib}}), ok)
	z.add(z.v1(9*mn, &CreateToken{ID: "boot", SecretHash: hashOf("frozen-boot-secret"), Role: RoleAdmin, Bootstrap: true}), ok)
	z.add(z.v1(10*mn, &SubmitJob{RequestID: "r1", Account: "phys", User: "ann", Name: "sweep\x07", Demand: map[string]float64{"cpu": 1.505, "mem": 2*gib + 1000}, Tasks: 4, Walltime: time.Hour, Command: []string{"sim", "--n=4"}}), ok)
	z.add(z.v1(11*mn, &SubmitJob{Account: "chem", User: "bob", Demand: map[string]float64{"cpu": 2}, Tasks: 2, Walltime: 500 * time.Millisecond, Command: []string{"quick"}}), ok)
	z.add(z.v1(12*mn, &Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 2, Task: 0, Node: "n2"}}}), ok)
	// Version 2 holding version-1 commands, one of them refused (an
	// unknown account) while its neighbours apply.
	z.add(multiEntry(
		z.v1(13*mn, &TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, {JobID: 1, Task: 1, Attempt: 1, Kind: TaskStarted}, {JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}}}),
		z.v1(13*mn, &Grant{Account: "geo", Amount: 1}),
		z.v1(14*mn, &UpdateAccount{Name: "chem", ClearContribution: true}),
	), ok, refused, ok)
	z.add(z.v1(20*mn, &TaskEvents{Events: []TaskEvent{
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskExited, ExitCode: 0, Runtime: 7 * mn},
		{JobID: 2, Task: 0, Attempt: 1, Kind: TaskExited, ExitCode: 3, Runtime: 400 * time.Millisecond},
	}}), ok)
	// A leader whose clock stepped back: applied at the last time.
	z.add(z.v1(19*mn, &CancelJob{JobID: 2}), ok)
	z.add(z.v1(21*mn, &RemoveMembership{User: "bob", Account: "phys"}), ok)
	z.add(z.v1(22*mn, &UpdateSettings{Policy: strp("ltdrf"), Window: strp("decay:7d"), Placement: strp("bestfit")}), ok)
	z.add(z.v1(23*mn, &CreateToken{ID: "ann-laptop", SecretHash: hashOf("frozen-ann-secret"), Role: RoleUser, User: "ann", Description: "ann's laptop"}), ok)
	z.add(z.v1(24*mn, &NodeDown{ID: "n2", Reason: "fan"}), ok)
	z.add(z.v1(25*mn, &Checkpoint{}), ok)

	// A raft configuration entry (a server joined): it only moves the
	// applied index.
	z.term = 2
	z.addLog(raft.Log{Type: raft.LogConfiguration}, "-")

	// Version 3: today's release, after an upgrade and a new leader.
	timeout := 90 * time.Second
	quantum := 30 * time.Second
	rho := 0.5
	interval := 10 * mn
	guarantee := 0.2
	z.add(z.v3(26*mn, &UpdateSettings{
		Timeout: &timeout, Quantum: &quantum, LTRFResource: strp("cpu"),
		AddResources: []string{"gpu"}, BillingWeights: map[string]float64{"cpu": 1, "mem": 0.25 / gib, "gpu": 8},
		BillingRule: strp("sum"), QKnoblerRho: &rho,
		Fawkes: &FawkesUpdate{Weighting: strp("JD"), Interval: &interval, Guarantee: &guarantee},
	}), ok)
	z.add(z.v3(27*mn, &CreateAccount{Name: "bio", Weight: f64(3)}), ok)
	z.add(z.v3(28*mn, &CreateUser{Name: "cat", Accounts: []string{"bio"}}), ok)
	z.add(z.v3(29*mn, &Grant{ID: "g-bio", Account: "bio", Amount: 2000 * ledger.MicroPerSU}), ok)
	z.add(z.v3(30*mn, &NodeUp{ID: "g1.rack2", Capacity: map[string]float64{"cpu": 32.759, "mem": 128*gib + 4321, "gpu": 4.5}, Class: "gpu", Account: "bio", Address: "10.0.2.1:7411"}), ok)
	z.add(z.v3(31*mn, &NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 * gib}}), ok)
	z.add(z.v3(32*mn, &SetGroupWeight{Path: "science", Weight: 2}), ok)
	z.add(z.v3(33*mn, &SetAccountGroup{Account: "bio", Group: "science/life"}), ok)
	z.add(z.v3(34*mn, &SetAccountGroup{Account: "phys", Group: "science"}), ok)
	z.add(z.v3(35*mn, &SetGroupWeight{Path: "scratch", Weight: 1}), ok)
	z.add(z.v3(36*mn, &RemoveGroup{Path: "scratch"}), ok)
	z.add(z.v3(37*mn, &CreateLatencyQueue{Account: "chem", Period: 10 * mn, Deadline: 5 * mn, Burst: map[string]float64{"cpu": 2}}), ok)
	z.add(z.v3(38*mn, &CreateLatencyQueue{Account: "bio", Period: time.Hour, Deadline: 10 * mn, Burst: map[string]float64{"gpu": 1}}), ok)
	z.add(z.v3(39*mn, &RemoveLatencyQueue{Account: "bio"}), ok)
	z.add(z.v3(40*mn, &SetShares{Shares: []AccountShare{{"bio", 0.5}, {"chem", 0.2}, {"phys", 0.3}}}), ok)
	z.add(z.v3(41*mn, &CreateToken{ID: "w-g1", SecretHash: hashOf("frozen-worker-secret"), Role: RoleWorker, Node: "g1.rack2", ExpiresAt: z.at(24 * time.Hour)}), ok)
	z.add(z.v3(42*mn, &RevokeToken{ID: "ann-laptop"}), ok)
	z.add(z.v3(43*mn, &UpdateAccount{Name: "phys", Weight: f64(1.5)}), ok)
	z.add(z.v3(44*mn, &AddMembership{User: "cat", Account: "phys"}), ok)
	snapshotAt := len(z.entries)

	// Rules version 3 added: the same job version 1 accepted above is
	// refused now (a control character, a walltime under a second).
	bad := &SubmitJob{Account: "chem", User: "bob", Name: "x\x07", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}
	z.add(rawEntry(wholeUnitsVersion, TypeSubmitJob, z.at(45*mn), string(mustT(json.Marshal(bad)))), refused)
	bad.Name, bad.Walltime = "", 500*time.Millisecond
	z.add(rawEntry(wholeUnitsVersion, TypeSubmitJob, z.at(45*mn), string(mustT(json.Marshal(bad)))), refused)
	z.add(z.v3(46*mn, &SubmitJob{RequestID: "r2", Account: "bio", User: "cat", Name: "fold", Demand: map[string]float64{"cpu": 3.205, "mem": 8*gib + 1, "gpu": 1}, Tasks: 3, Walltime: 2 * time.Hour, Command: []string{"fold", "-i", "in.pdb"}, MaxAttempts: 2, CheckFit: true}), ok)
	// A job no node holds, refused by the fit check.
	z.add(z.v3(47*mn, &SubmitJob{Account: "bio", User: "cat", Demand: map[string]float64{"gpu": 9}, Tasks: 1, Walltime: time.Hour, Command: []string{"big"}, CheckFit: true}), refused)
	// The same request id again: the first job, nothing more held.
	z.add(z.v3(48*mn, &SubmitJob{RequestID: "r2", Account: "bio", User: "cat", Name: "fold", Demand: map[string]float64{"cpu": 3.205, "mem": 8*gib + 1, "gpu": 1}, Tasks: 3, Walltime: 2 * time.Hour, Command: []string{"fold", "-i", "in.pdb"}, MaxAttempts: 2, CheckFit: true}), ok)
	// Group commit of today's commands, with a stale placement dropped.
	z.add(multiEntry(
		z.v3(49*mn, &SubmitJob{Account: "chem", User: "bob", Demand: map[string]float64{"cpu": 1}, Tasks: 2, Walltime: 30 * mn, Command: []string{"lat"}}),
		z.v3(49*mn, &Assign{Placements: []TaskPlacement{{JobID: 3, Task: 0, Node: "g1.rack2"}, {JobID: 3, Task: 1, Node: "g1.rack2"}, {JobID: 4, Task: 0, Node: "n2"}, {JobID: 1, Task: 2, Node: "n1"}, {JobID: 2, Task: 1, Node: "n2"}}}),
	), ok, ok)
	z.add(z.v3(50*mn, &TaskEvents{Events: []TaskEvent{
		{JobID: 3, Task: 0, Attempt: 1, Kind: TaskStarted},
		{JobID: 3, Task: 1, Attempt: 1, Kind: TaskStarted},
		{JobID: 4, Task: 0, Attempt: 1, Kind: TaskStarted},
		{JobID: 1, Task: 2, Attempt: 1, Kind: TaskStarted},
		{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, // late: ignored
	}}), ok)
	z.add(z.v3(55*mn, &TaskEvents{Events: []TaskEvent{
		{JobID: 3, Task: 0, Attempt: 1, Kind: TaskExited, ExitCode: 1, Runtime: 5 * mn},
		{JobID: 4, Task: 0, Attempt: 1, Kind: TaskExited, Runtime: 6 * mn},
		{JobID: 1, Task: 1, Attempt: 1, Kind: TaskLost, Runtime: 20 * mn},
	}}), ok)
	z.add(z.v3(56*mn, &NodeDown{ID: "g1.rack2", Reason: "unreachable", KeepAttempts: true}), ok)
	z.add(z.v3(57*mn, &NodeDown{ID: "g1.rack2", Reason: "fenced", FailedAt: z.at(56 * mn)}), ok)
	z.add(z.v3(58*mn, &CancelJob{JobID: 1}), ok)
	z.add(z.v3(59*mn, &RemoveMembership{User: "cat", Account: "phys"}), ok)
	z.add(z.v3(60*mn, &Checkpoint{}), ok)
	// The leader's digest of the state before the checkpoint, as the
	// leader proposes it.
	cp := uint64(len(z.entries))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := z.f.CheckpointDigest(ctx, cp)
	if err != nil {
		z.t.Fatal(err)
	}
	z.add(z.v3(61*mn, &Checkpoint{CompareIndex: cp, Digest: hex.EncodeToString(d[:])}), ok)
	// A checkpoint inside a multi-command entry is refused.
	z.add(multiEntry(z.v3(62*mn, &Checkpoint{}), z.v3(62*mn, &SetGroupWeight{Path: "science", Weight: 3})), refused, ok)

	// Set v4 added job control: limits, holds, updates (an admin's
	// priority), dependencies and terms at submission, requeues.
	z.add(z.v3(63*mn, &SetLimits{Account: "chem", Limits: Limits{MaxRunningTasks: 4, MaxWalltime: 2 * time.Hour}}), ok)
	z.add(z.v3(64*mn, &SetLimits{User: "bob", Limits: Limits{MaxJobs: 10}}), ok)
	z.add(z.v3(65*mn, &SetLimits{Account: "nope", Limits: Limits{MaxJobs: 1}}), refused)
	z.add(z.v3(66*mn, &HoldJob{JobID: 4, Hold: true}), ok)
	z.add(z.v3(67*mn, &HoldJob{JobID: 4}), ok)
	z.add(z.v3(68*mn, &HoldJob{JobID: 99, Hold: true}), refused) // no such job
	name, nice, prio := "lat-2", 5, 10
	z.add(z.v3(69*mn, &UpdateJob{JobID: 4, Name: &name, Nice: &nice, Priority: &prio}), ok)
	z.add(z.v3(70*mn, &SubmitJob{Account: "chem", User: "bob", Name: "after", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: 30 * mn,
		Command: []string{"post"}, Dependency: "afterany:4", Begin: z.at(80 * mn), Throttle: 1, Nice: 3, Hold: true, DependencyViewer: "bob"}), ok)
	z.add(z.v3(71*mn, &SubmitJob{Account: "chem", User: "bob", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: 30 * mn,
		Command: []string{"x"}, Dependency: "afterok:3", DependencyViewer: "bob"}), refused) // job 3 is bio's: unseen
	z.add(z.v3(72*mn, &Assign{Placements: []TaskPlacement{{JobID: 4, Task: 1, Node: "n2"}}}), ok)
	z.add(z.v3(73*mn, &RequeueJob{JobID: 4}), ok)
	z.add(z.v3(74*mn, &RequeueJob{JobID: 1}), refused)
	z.add(z.v3(75*mn, &TaskEvents{Events: []TaskEvent{{JobID: 4, Task: 1, Attempt: 1, Kind: TaskExited, ExitCode: 143, Runtime: 3 * mn}}}), ok)

	// Set v5 added look-ahead queues, and version 4: a lowered walltime
	// leaves placed tasks their limit (a version-3 entry bounded their
	// charge), and a start's runtime dates it back.
	z.add(z.v3(76*mn, &SubmitJob{Account: "chem", User: "bob", Name: "old-rule", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"y"}}), ok)
	z.add(z.v4(76*mn, &SubmitJob{Account: "chem", User: "bob", Name: "look-ahead", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"z"}}), ok)
	z.add(z.v4(77*mn, &Assign{Placements: []TaskPlacement{{JobID: 6, Task: 0, Node: "n2"}, {JobID: 7, Task: 0, Node: "n2"}, {JobID: 7, Task: 1, Node: "n2", Queued: true}, {JobID: 7, Task: 2, Node: "n2"}}}), ok)
	z.add(z.v4(78*mn, &TaskEvents{Events: []TaskEvent{
		{JobID: 6, Task: 0, Attempt: 1, Kind: TaskStarted},
		{JobID: 7, Task: 0, Attempt: 1, Kind: TaskStarted, Runtime: 30 * time.Second},
		{JobID: 7, Task: 2, Attempt: 1, Kind: TaskStarted, Runtime: 2 * time.Hour}, // dated no earlier than its placement
	}}), ok)
	short := 10 * mn
	z.add(z.v3(79*mn, &UpdateJob{JobID: 6, Walltime: &short}), ok)
	z.add(z.v4(79*mn, &UpdateJob{JobID: 7, Walltime: &short}), ok) // tasks 0 and 2 keep an hour; queued task 1 is taken back
	z.add(z.v4(100*mn, &TaskEvents{Events: []TaskEvent{
		{JobID: 6, Task: 0, Attempt: 1, Kind: TaskExited, Runtime: 20 * mn}, // charged 10 minutes, as version 3 applied
		{JobID: 7, Task: 0, Attempt: 1, Kind: TaskExited, Runtime: 20 * mn}, // charged 20
		{JobID: 7, Task: 1, Attempt: 1, Kind: TaskExited, ExitCode: 143},    // never started: free, and pending again
		{JobID: 7, Task: 2, Attempt: 1, Kind: TaskLost},                     // charged from its placement
	}}), ok)
	z.add(z.v4(101*mn, &Assign{Placements: []TaskPlacement{{JobID: 7, Task: 1, Node: "n2", Queued: true}}}), ok)
	z.add(z.v4(102*mn, &TaskEvents{Events: []TaskEvent{{JobID: 7, Task: 1, Attempt: 2, Kind: TaskStarted, Runtime: time.Minute}}}), ok) // a queued start is dated by its entry
	// A lost attempt whose rerun its job's hold cannot cover as well is
	// charged against a hold of its own.
	z.add(z.v4(103*mn, &SubmitJob{Account: "chem", User: "bob", Name: "rerun", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"r"}, MaxAttempts: 2}), ok)
	z.add(z.v4(103*mn, &Assign{Placements: []TaskPlacement{{JobID: 8, Task: 0, Node: "n2"}}}), ok)
	z.add(z.v4(110*mn, &NodeDown{ID: "n2", Reason: "power"}), ok)
	z.add(z.v4(111*mn, &NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 * gib}}), ok)
	return snapshotAt
}

func mustT[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
