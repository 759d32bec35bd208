package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of names and node ids.
const (
	// MaxNameLength bounds account, user, grant, token, request and
	// resource names, in bytes (names are ASCII, so also in characters).
	MaxNameLength = 64
	// MaxNodeIDLength bounds node ids, which are often fully qualified
	// host names, sometimes with a port.
	MaxNodeIDLength = 255
)

// Walltime bounds of a job's tasks. The minimum is one second: a task
// cannot start, run and report in less (Slurm's unit is the minute), and a
// walltime of a few nanoseconds only looks like a job that would be free.
// The maximum is a year.
const (
	MinWalltime = time.Second
	MaxWalltime = 365 * 24 * time.Hour
)

// MaxPriority bounds an admin's boost of a job (UpdateJob's priority);
// 0 is none.
const MaxPriority = 1_000_000

// MaxNodesPerJob bounds how many nodes one task of a parallel job spans:
// more than any centre has.
const MaxNodesPerJob = 100_000

// CheckName checks a name: 1 to MaxNameLength letters, digits, '.', '_'
// or '-', starting with a letter or digit. Names appear in keys, logs,
// file names and command lines, so they are kept plain ASCII. field names
// the value in the error.
func CheckName(field, name string) error {
	if name == "" {
		return fmt.Errorf("%s is empty: give a name of letters, digits, '.', '_' or '-'", field)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%s %s is %d bytes long: use at most %d", field, quotePrefix(name), len(name), MaxNameLength)
	}
	if i := plainPrefix(name, false); i < len(name) {
		return fmt.Errorf("%s %q has %s: use letters, digits, '.', '_' or '-', starting with a letter or digit", field, name, offending(name, i))
	}
	return nil
}

// CheckNodeID checks a node id: 1 to MaxNodeIDLength letters, digits, '.',
// '_', '-' or ':', starting with a letter or digit (a host name, perhaps
// with a port). It is the rule of every server's and worker's --node-id.
func CheckNodeID(field, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty: give the node's id (its --node-id, usually the host name)", field)
	}
	if len(id) > MaxNodeIDLength {
		return fmt.Errorf("%s %s is %d bytes long: use at most %d", field, quotePrefix(id), len(id), MaxNodeIDLength)
	}
	if i := plainPrefix(id, true); i < len(id) {
		return fmt.Errorf("%s %q has %s: a node id is letters, digits, '.', '_', '-' or ':', starting with a letter or digit (the worker's --node-id)", field, id, offending(id, i))
	}
	return nil
}

// plainPrefix returns the length of the longest prefix of s that follows
// the name rule (with ':' too when colon is set): the index of the first
// offending byte, or len(s).
func plainPrefix(s string, colon bool) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if i == 0 || c != '.' && c != '_' && c != '-' && (!colon || c != ':') {
			return i
		}
	}
	return len(s)
}

// offending describes the character of s at byte offset i for an error:
// the character itself (not the first byte of its encoding) and its
// position counted in characters from 1.
func offending(s string, i int) string {
	pos := utf8.RuneCountInString(s[:i]) + 1
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("the byte 0x%02X, which is not UTF-8, at character %d", s[i], pos)
	}
	return fmt.Sprintf("%s at character %d", strconv.QuoteRune(r), pos)
}

// quotePrefix quotes the first 16 characters of a long value for an error.
func quotePrefix(s string) string {
	n := 0
	for i := range s {
		if n == 16 {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

// CheckText checks one line of free text (a job name, a note, a
// description, a reason, a node class or address): at most limit bytes of
// valid UTF-8 with no control, bidirectional formatting or line separator
// character (see Unsafe).
func CheckText(field, s string, limit int) error {
	return checkText(field, s, limit, false)
}

// CheckCommandText is CheckText for a command's arguments: a shell
// script may hold newlines and tabs, so '\n' and '\t' are allowed there;
// every other character CheckText refuses is refused.
func CheckCommandText(field, s string, limit int) error {
	return checkText(field, s, limit, true)
}

func checkText(field, s string, limit int, script bool) error {
	if len(s) > limit {
		return fmt.Errorf("%s is %d bytes long: use at most %d", field, len(s), limit)
	}
	i, bad := firstUnsafe(s, script)
	if !bad {
		return nil
	}
	what := "a control character"
	if r, size := utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && size <= 1 {
		what = "invalid UTF-8"
	} else if isLayout(r) {
		what = "a character that changes how text is laid out"
	}
	allowed := ""
	if script {
		allowed = " (newlines and tabs are allowed)"
	}
	return fmt.Errorf("%s %s has %s, %s: remove it; text may not hold control characters, bidirectional overrides or invalid UTF-8%s", field, quotePrefix(s), what, offending(s, i), allowed)
}

// firstUnsafe returns the byte offset of the first character of s that
// Unsafe refuses (allowing '\n' and '\t' when script is set), and whether
// there is one. Plain printable ASCII is checked a byte at a time.
func firstUnsafe(s string, script bool) (int, bool) {
	for i := 0; i < len(s); {
		// Eight bytes at a time while they are all printable ASCII: no
		// byte with the high bit, none below 0x20, none equal to 0x7F.
		for len(s)-i >= 8 {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if w&hi != 0 || (w-0x20*lo)&^w&hi != 0 || (w^0x7F*lo-lo)&^(w^0x7F*lo)&hi != 0 {
				break
			}
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if script && (c == '\n' || c == '\t') {
				i++
				continue
			}
			return i, true
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || Unsafe(r) {
			return i, true
		}
		i += size
	}
	return 0, false
}

// lo and hi are the low and high bit of every byte of a word.
const (
	lo = 0x0101010101010101
	hi = 0x8080808080808080
)

// Unsafe reports whether r is a character text must not hold: a C0 or C1
// control character, DEL, a bidirectional formatting character, or a line
// or paragraph separator. Each can make a terminal or an editor show
// something other than the text (move the cursor, erase, recolour, reorder
// or break the line), and none belongs in a name or a note.
func Unsafe(r rune) bool {
	return r < 0x20 || r >= 0x7F && r <= 0x9F || isLayout(r)
}

// isLayout reports the bidirectional formatting characters (ALM, LRM, RLM,
// LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI) and the line and paragraph
// separators.
func isLayout(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x2028 && r <= 0x202E:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Escape returns s with every character Unsafe refuses, and every byte
// that is not UTF-8, written as a Go escape (\n, \x1b, \u202e), so that
// text from elsewhere (a server's reply, a name stored by an older
// release) prints as what it is and cannot drive the terminal. Printable
// text, non-ASCII letters included, is returned unchanged and without a
// copy. Backslashes are left alone: what is escaped is only ever a
// character no valid name or text holds.
func Escape(s string) string {
	i, bad := firstUnsafe(s, false)
	if !bad {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unsafe(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
