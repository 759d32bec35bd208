package ledger

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// WindowKind names how much history the fairness book remembers.
type WindowKind string

// The window kinds. The tumbling and sliding windows are the two of the H-MRF
// paper's Section 6; decay is the exponential forgetting HPC admins know from
// Slurm's PriorityDecayHalfLife.
const (
	// WindowNone keeps all history: Ü += U·dt forever.
	WindowNone WindowKind = "none"
	// WindowTumbling forgets everything at each epoch-aligned boundary kL.
	WindowTumbling WindowKind = "tumbling"
	// WindowSliding counts tasks that ended within the last L, in full,
	// plus the usage so far of running tasks.
	WindowSliding WindowKind = "sliding"
	// WindowDecay weighs past usage by 2^(−age/H), H being the half-life.
	WindowDecay WindowKind = "decay"
)

// Window is a fairness window. Length is the window length for tumbling and
// sliding windows and the half-life for decay; it is zero for none. The zero
// Window is treated as none by the fairness book.
type Window struct {
	Kind   WindowKind
	Length time.Duration
}

const (
	day  = 24 * time.Hour
	week = 7 * day
)

// windowSyntax is shown whenever a window string cannot be understood.
const windowSyntax = "valid windows are none, tumbling:<length>, sliding:<length> and decay:<half-life>, " +
	"with lengths such as 90m, 24h, 7d or 2w"

// ParseWindow reads a window as written in configuration and on the command
// line: "none", "tumbling:24h", "sliding:90m", "decay:7d". Lengths are Go
// durations, and may also use d (days) and w (weeks), as in "1w3d12h".
func ParseWindow(s string) (Window, error) {
	text := strings.TrimSpace(s)
	kindText, lengthText, hasLength := strings.Cut(text, ":")
	kind := WindowKind(strings.ToLower(strings.TrimSpace(kindText)))
	lengthText = strings.TrimSpace(lengthText)
	switch kind {
	case WindowNone:
		if hasLength {
			return Window{}, fmt.Errorf("window %q: none keeps all history and takes no length; write just \"none\"", s)
		}
		return Window{Kind: WindowNone}, nil
	case WindowTumbling, WindowSliding, WindowDecay:
	default:
		return Window{}, fmt.Errorf("window %q: unknown kind %q: %s", s, kindText, windowSyntax)
	}
	if !hasLength || lengthText == "" {
		return Window{}, fmt.Errorf("window %q: the length is missing: window length must be positive, e.g. %s:24h", s, kind)
	}
	length, err := parseLength(lengthText)
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	w := Window{Kind: kind, Length: length}
	if err := w.Validate(); err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	return w, nil
}

// Validate reports whether w is a window the fairness book can keep.
func (w Window) Validate() error {
	switch w.Kind {
	case WindowNone, "":
		if w.Length != 0 {
			return fmt.Errorf("window none keeps all history and takes no length, got %v", w.Length)
		}
		return nil
	case WindowTumbling, WindowSliding, WindowDecay:
		if w.Length <= 0 {
			return fmt.Errorf("window length is %v: window length must be positive, e.g. %s:24h", w.Length, w.Kind)
		}
		return nil
	default:
		return fmt.Errorf("unknown window kind %q: %s", w.Kind, windowSyntax)
	}
}

// String writes w so that ParseWindow reads back the same Window: whole weeks
// and days use w and d, anything else Go's duration syntax.
func (w Window) String() string {
	if w.Kind == WindowNone || w.Kind == "" {
		return string(WindowNone)
	}
	return string(w.Kind) + ":" + formatLength(w.Length)
}

// DefaultTimeout is the starvation time-out the paper suggests for this
// window: its length (the half-life for decay), and none without a window.
func (w Window) DefaultTimeout() time.Duration {
	switch w.Kind {
	case WindowTumbling, WindowSliding, WindowDecay:
		return w.Length
	default:
		return 0
	}
}

func formatLength(d time.Duration) string {
	switch {
	case d > 0 && d%week == 0:
		return strconv.FormatInt(int64(d/week), 10) + "w"
	case d > 0 && d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	default:
		return d.String()
	}
}

// parseLength extends time.ParseDuration with the units d and w. Each
// number-and-unit term is parsed on its own so that "1w3d12h" works; terms in
// Go's own units go through time.ParseDuration, which keeps its exactness.
func parseLength(s string) (time.Duration, error) {
	bad := func(why string) error {
		return fmt.Errorf("cannot read length %q (%s): use a Go duration such as 90m or 24h, or days and weeks such as 7d or 2w", s, why)
	}
	rest := s
	negative := false
	if rest[0] == '-' || rest[0] == '+' {
		negative = rest[0] == '-'
		rest = rest[1:]
	}
	if rest == "" {
		return 0, bad("no number")
	}
	var total time.Duration
	for rest != "" {
		n := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if n == 0 {
			return 0, bad("expected a number before " + strconv.Quote(rest))
		}
		if n < 0 {
			if x, err := strconv.ParseFloat(rest, 64); err == nil && x == 0 {
				break // a bare 0, as time.ParseDuration allows; Validate refuses it
			}
			return 0, bad("the number " + strconv.Quote(rest) + " has no unit")
		}
		number := rest[:n]
		rest = rest[n:]
		u := strings.IndexFunc(rest, func(r rune) bool { return (r >= '0' && r <= '9') || r == '.' })
		if u < 0 {
			u = len(rest)
		}
		unit := rest[:u]
		rest = rest[u:]
		var term time.Duration
		switch unit {
		case "d", "w":
			x, err := strconv.ParseFloat(number, 64)
			if err != nil {
				return 0, bad("bad number " + strconv.Quote(number))
			}
			scale := day
			if unit == "w" {
				scale = week
			}
			ns := math.Round(x * float64(scale))
			if ns >= math.MaxInt64 {
				return 0, bad("too long")
			}
			term = time.Duration(ns)
		default:
			d, err := time.ParseDuration(number + unit)
			if err != nil {
				return 0, bad(strconv.Quote(number+unit) + " is not a number with a known unit")
			}
			term = d
		}
		if term > math.MaxInt64-total {
			return 0, bad("too long")
		}
		total += term
	}
	if negative {
		total = -total
	}
	return total, nil
}
