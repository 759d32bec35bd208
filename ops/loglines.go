package ops

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
)

// LevelTrace is hashicorp's TRACE, one step below slog's debug level.
const LevelTrace = slog.LevelDebug - 4

// NewBracketLogWriter returns a writer for a standard library *log.Logger
// that turns lines in the "[LEVEL] component: message" style of hashicorp's
// libraries (memberlist and raft log this way) into slog records at that
// level, tagged with component. A line without a level is logged at info.
func NewBracketLogWriter(logger *slog.Logger, component string) io.Writer {
	return &bracketLogWriter{logger: logger, component: component}
}

type bracketLogWriter struct {
	logger    *slog.Logger
	component string
}

func (w *bracketLogWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		level, msg := parseBracketLevel(string(line))
		if w.logger.Enabled(context.Background(), level) {
			w.logger.Log(context.Background(), level, msg, "component", w.component)
		}
	}
	return len(p), nil
}

func parseBracketLevel(line string) (slog.Level, string) {
	line = strings.TrimSpace(line)
	tag, msg, ok := strings.Cut(strings.TrimPrefix(line, "["), "]")
	if !strings.HasPrefix(line, "[") || !ok {
		return slog.LevelInfo, line
	}
	msg = strings.TrimSpace(msg)
	switch strings.ToUpper(tag) {
	case "TRACE":
		return LevelTrace, msg
	case "DEBUG":
		return slog.LevelDebug, msg
	case "WARN", "WARNING":
		return slog.LevelWarn, msg
	case "ERR", "ERROR":
		return slog.LevelError, msg
	default:
		return slog.LevelInfo, msg
	}
}
