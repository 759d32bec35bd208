package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// evilName is a job name an older release accepted: it clears the screen,
// turns the text red and forges a line of the listing.
const evilName = "x\x1b[2J\x1b[31mred\n9999 root fake"

// A server whose state holds names and notes with control characters —
// written by a release before the text rule, and restored from its
// snapshot — serves them; the CLI prints them escaped in tables, CSV and
// detail views, and exactly in JSON.
func TestCLIEscapesControlCharactersFromTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	file := oldSnapshot(t)
	g := startBackupGroup(ctx, t, "esc", 1)
	addr := addrFlag(g)
	runCLI(t, "operator", "snapshot", "restore", file, "--yes", "--addr", addr)

	raw := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\r") || strings.Contains(out, "\n9999") {
			t.Errorf("%s prints control characters raw:\n%q", what, out)
		}
	}
	out := runCLI(t, "jobs", "--addr", addr)
	raw("jobs", out)
	if !strings.Contains(out, `x\x1b[2J\x1b[31mred\n9999 root fake`) {
		t.Errorf("jobs does not show the name escaped:\n%s", out)
	}
	out = runCLI(t, "jobs", "--addr", addr, "--output", "csv")
	raw("jobs --output csv", out)
	out = runCLI(t, "job", "show", "1", "--addr", addr)
	raw("job show", out)
	if !strings.Contains(out, `x\x1b[2J`) {
		t.Errorf("job show does not show the name escaped:\n%s", out)
	}
	out = runCLI(t, "grant", "list", "--addr", addr)
	raw("grant list", out)
	if !strings.Contains(out, `paid\rby`) {
		t.Errorf("grant list does not show the note escaped:\n%s", out)
	}

	// JSON encodes the characters itself and keeps the exact value.
	var jobs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(runCLI(t, "jobs", "--addr", addr, "--output", "json")), &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Name != evilName {
		t.Fatalf("jobs --output json = %+v, want the name as stored", jobs)
	}
}

// oldSnapshot writes a saved snapshot (the format of 'operator snapshot
// save') of a state built from version-1 log entries, as a release before
// the text rule wrote them, and returns its path.
func oldSnapshot(t *testing.T) string {
	t.Helper()
	f, err := fsm.Open(fsm.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := ledger.Time(time.Now().Add(-time.Hour).UnixNano())
	cmds := []fsm.Command{
		&fsm.CreateAccount{Name: "phys"},
		&fsm.CreateUser{Name: "ann", Accounts: []string{"phys"}},
		&fsm.Grant{ID: "g1", Account: "phys", Amount: 1000 * ledger.MicroPerSU, Note: "paid\rby"},
		&fsm.SubmitJob{Account: "phys", User: "ann", Name: evilName, Demand: map[string]float64{"cpu": 1}, Tasks: 1,
			Walltime: time.Minute, Command: []string{"true"}},
	}
	for i, c := range cmds {
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		entry := make([]byte, 10, 10+len(body))
		entry[0], entry[1] = 1, byte(c.Type())
		binary.BigEndian.PutUint64(entry[2:], uint64(at)+uint64(i))
		r, err := fsm.Response[any](f.Apply(&raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: append(entry, body...)}))
		if err != nil {
			t.Fatalf("old entry %d (%s) refused: %v (%v)", i, c.Type(), err, r)
		}
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	hdr, err := json.Marshal(map[string]any{"raft_version": 1, "index": len(cmds), "term": 1, "size": sink.Len(), "node_id": "old-1"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(sink.Bytes())
	var file bytes.Buffer
	fmt.Fprintf(&file, "longfair-snapshot 1\n%s\n", hdr)
	file.Write(sink.Bytes())
	fmt.Fprintf(&file, "sha256 %s\n", hex.EncodeToString(sum[:]))
	path := filepath.Join(t.TempDir(), "old.snap")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (*memSink) ID() string    { return "mem" }
func (*memSink) Cancel() error { return nil }
func (*memSink) Close() error  { return nil }

// Every table and CSV cell is escaped, whatever command built the table.
func TestWriteTableEscapesCells(t *testing.T) {
	tab := table{header: []string{"NAME", "NOTE"}}
	tab.add("ok", "plain")
	tab.add("a\x1b[31mb", "line\nbreak\u202e")
	for _, format := range []string{"table", "csv"} {
		var out bytes.Buffer
		if err := writeTable(&out, format, tab); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(out.String(), "\x1b\u202e") || strings.Count(out.String(), "\n") != 3 {
			t.Errorf("%s output holds raw control characters:\n%q", format, out.String())
		}
		if !strings.Contains(out.String(), `a\x1b[31mb`) || !strings.Contains(out.String(), `line\nbreak\u202e`) {
			t.Errorf("%s output does not show the cells escaped:\n%s", format, out.String())
		}
	}
	if tab.rows[1][0] != "a\x1b[31mb" {
		t.Fatal("writeTable changed the caller's table")
	}
}

// escapeReply reaches every string of a reply: nested messages, list
// elements, map keys; numbers and clean strings are left as they are.
func TestEscapeReplyReachesEveryString(t *testing.T) {
	resp := &longfairv1.ListJobsResponse{Jobs: []*longfairv1.Job{{
		Id: 3, Name: "a\x1bb", Account: "phys", Command: []string{"ok", "x\u202ey"},
		Demand: map[string]float64{"c\x07pu": 2, "mem": 4},
	}}, NextPageToken: "tok"}
	escapeReply(resp)
	j := resp.GetJobs()[0]
	if j.GetName() != `a\x1bb` || j.GetCommand()[0] != "ok" || j.GetCommand()[1] != `x\u202ey` || j.GetAccount() != "phys" || j.GetId() != 3 {
		t.Fatalf("escaped job = %v", j)
	}
	if j.GetDemand()[`c\apu`] != 2 || j.GetDemand()["mem"] != 4 || len(j.GetDemand()) != 2 || resp.GetNextPageToken() != "tok" {
		t.Fatalf("escaped demand = %v, token %q", j.GetDemand(), resp.GetNextPageToken())
	}
}
