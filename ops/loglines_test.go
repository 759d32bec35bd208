package ops

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestBracketLogWriterKeepsEachLinesLevel(t *testing.T) {
	var buf bytes.Buffer
	w := NewBracketLogWriter(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), "memberlist")
	in := "[DEBUG] memberlist: dropped\n[WARN] memberlist: refuting a suspect message\n[ERR] memberlist: failed\nplain line\n[TRACE] noise\n"
	if n, err := w.Write([]byte(in)); err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, rec)
	}
	want := []struct{ level, msg string }{
		{"WARN", "memberlist: refuting a suspect message"},
		{"ERROR", "memberlist: failed"},
		{"INFO", "plain line"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d (debug and trace are below info): %s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		if got[i]["level"] != w.level || got[i]["msg"] != w.msg || got[i]["component"] != "memberlist" {
			t.Errorf("record %d = %v, want level %s msg %q component memberlist", i, got[i], w.level, w.msg)
		}
	}
}
