package ops

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestLoggerLevelFiltersMessages(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  []string // messages that must appear, in order
	}{
		{"debug", []string{"d", "i", "w", "e"}},
		{"INFO", []string{"i", "w", "e"}},
		{"", []string{"i", "w", "e"}},
		{"warn", []string{"w", "e"}},
		{"error", []string{"e"}},
	} {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, tc.level, "json")
		if err != nil {
			t.Fatalf("level %q: %v", tc.level, err)
		}
		log.Debug("d")
		log.Info("i")
		log.Warn("w")
		log.Error("e")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var rec struct {
				Msg string `json:"msg"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("level %q: line %q is not JSON: %v", tc.level, line, err)
			}
			got = append(got, rec.Msg)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("level %q logged %v, want %v", tc.level, got, tc.want)
		}
	}
}

func TestLoggerTextFormatIsKeyValue(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "info", "text")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("server started", "grpc", "127.0.0.1:7410")
	if line := buf.String(); !strings.Contains(line, `msg="server started"`) || !strings.Contains(line, "grpc=127.0.0.1:7410") {
		t.Errorf("text log line %q lacks msg= and grpc= pairs", line)
	}
}

func TestLoggerRefusesUnknownSettings(t *testing.T) {
	for _, tc := range []struct{ level, format, want string }{
		{"verbose", "text", "debug, info, warn or error"},
		{"info", "xml", "text or json"},
	} {
		if _, err := NewLogger(&bytes.Buffer{}, tc.level, tc.format); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLogger(%q, %q) = %v, want an error naming %q", tc.level, tc.format, err, tc.want)
		}
	}
}
