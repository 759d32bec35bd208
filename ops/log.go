package ops

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Log levels and formats accepted by --log-level and --log-format.
const (
	LogLevels  = "debug, info, warn or error"
	LogFormats = "text or json"
)

// ParseLogLevel reads a log level name: debug, info, warn or error, in any
// case. The empty string is info, the default.
func ParseLogLevel(name string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q is not known: use %s", name, LogLevels)
}

// CheckLogFormat reports whether format is a log format NewLogger knows:
// text (key=value pairs, for people) or json (one object per line, for log
// collectors). The empty string is text, the default.
func CheckLogFormat(format string) error {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text", "json":
		return nil
	}
	return fmt.Errorf("log format %q is not known: use %s", format, LogFormats)
}

// NewLogger returns a structured logger writing to w at the given level in
// the given format. Both are checked first, so a misspelt flag is an error
// and not a silently chatty or silent process.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	lvl, err := ParseLogLevel(level)
	if err != nil {
		return nil, err
	}
	if err := CheckLogFormat(format); err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(strings.TrimSpace(format), "json") {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
