package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func jsonLogger(buf *bytes.Buffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: level}))
}

func decodeLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestHclogAdapterKeepsLevelsNamesAndArgs(t *testing.T) {
	var buf bytes.Buffer
	h := newHclog(jsonLogger(&buf, slog.LevelDebug), "raft")
	h.Trace("below debug, dropped")
	h.Named("net").With("peer", "s2").Warn("failed to contact", "error", errors.New("refused"), "attempt", 3)
	h.Info("odd args", "lonely")

	lines := decodeLines(t, &buf)
	if len(lines) != 2 {
		t.Fatalf("got %d log lines, want 2 (trace is below the handler's level): %s", len(lines), buf.String())
	}
	w := lines[0]
	if w["level"] != "WARN" || w["msg"] != "failed to contact" || w["component"] != "raft.net" ||
		w["peer"] != "s2" || w["error"] != "refused" || w["attempt"] != float64(3) {
		t.Fatalf("warn line = %v", w)
	}
	if lines[1]["extra"] != "lonely" {
		t.Fatalf("an odd trailing argument is kept as extra: %v", lines[1])
	}
	if h.IsTrace() || !h.IsDebug() {
		t.Fatal("IsTrace/IsDebug must follow the slog handler's level")
	}
	h.SetLevel(hclog.Error)
	if h.IsWarn() {
		t.Fatal("SetLevel(Error) must silence warnings")
	}
}
