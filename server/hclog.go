package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/longfair/longfair/ops"
)

// hclogAdapter routes hashicorp/raft's hclog output into slog, so a server
// has one log stream in one format. Raft's trace level maps below slog's
// debug level.
type hclogAdapter struct {
	logger  *slog.Logger
	name    string
	implied []any
	// level is shared by every logger derived with With or Named, as
	// hclog's own loggers share theirs.
	level *atomic.Int32
}

const slogTrace = ops.LevelTrace

func newHclog(logger *slog.Logger, name string) hclog.Logger {
	lvl := new(atomic.Int32)
	lvl.Store(int32(hclog.Trace))
	return &hclogAdapter{logger: logger, name: name, level: lvl}
}

func toSlogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return slogTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (h *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level < hclog.Level(h.level.Load()) {
		return
	}
	sl := toSlogLevel(level)
	ctx := context.Background()
	if !h.logger.Enabled(ctx, sl) {
		return
	}
	attrs := make([]any, 0, len(h.implied)+len(args)+2)
	if h.name != "" {
		attrs = append(attrs, "component", h.name)
	}
	attrs = append(attrs, h.implied...)
	attrs = append(attrs, hclogArgs(args)...)
	h.logger.Log(ctx, sl, msg, attrs...)
}

// hclogArgs makes hclog's key/value pairs safe for slog: keys become
// strings, and values hclog would format (errors, Stringers) are formatted.
func hclogArgs(args []any) []any {
	out := make([]any, 0, len(args))
	for i := 0; i < len(args); i += 2 {
		key := fmt.Sprint(args[i])
		if i+1 >= len(args) {
			out = append(out, slog.String("extra", key))
			break
		}
		v := args[i+1]
		switch x := v.(type) {
		case error:
			v = x.Error()
		case fmt.Stringer:
			v = x.String()
		}
		out = append(out, slog.Any(key, v))
	}
	return out
}

func (h *hclogAdapter) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogAdapter) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogAdapter) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogAdapter) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogAdapter) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogAdapter) enabled(l hclog.Level) bool {
	return l >= hclog.Level(h.level.Load()) && h.logger.Enabled(context.Background(), toSlogLevel(l))
}

func (h *hclogAdapter) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogAdapter) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogAdapter) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogAdapter) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogAdapter) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogAdapter) ImpliedArgs() []any { return h.implied }

func (h *hclogAdapter) With(args ...any) hclog.Logger {
	c := *h
	c.implied = append(append([]any(nil), h.implied...), hclogArgs(args)...)
	return &c
}

func (h *hclogAdapter) Name() string { return h.name }

func (h *hclogAdapter) Named(name string) hclog.Logger {
	c := *h
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (h *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *h
	c.name = name
	return &c
}

func (h *hclogAdapter) SetLevel(level hclog.Level) { h.level.Store(int32(level)) }
func (h *hclogAdapter) GetLevel() hclog.Level      { return hclog.Level(h.level.Load()) }

func (h *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return ops.NewBracketLogWriter(h.logger, h.name)
}
