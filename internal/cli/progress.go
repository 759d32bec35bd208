package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/longfair/longfair/client"
)

// progress reports how far a long operation is, on stderr: redrawn in
// place on a terminal, otherwise a line every few seconds and at the end.
type progress struct {
	w        io.Writer
	what     string
	total    int64 // 0 when unknown
	unit     string
	n        int64
	tty      bool
	last     time.Time
	started  time.Time
	finished bool
}

func newProgress(w io.Writer, what string, total int64, unit string) *progress {
	now := time.Now()
	return &progress{w: w, what: what, total: total, unit: unit, tty: isTerminal(w), started: now, last: now}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// set records that n units are done and redraws when it is time.
func (p *progress) set(n int64) {
	p.n = n
	every := 2 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if time.Since(p.last) >= every {
		p.draw()
	}
}

func (p *progress) line() string {
	elapsed := fmtDur(time.Since(p.started))
	if p.total > 0 {
		pct := 100 * float64(p.n) / float64(p.total)
		if p.unit == "bytes" {
			return fmt.Sprintf("%s: %s of %s (%.0f%%), %s", p.what, fmtBytes(p.n), fmtBytes(p.total), pct, elapsed)
		}
		return fmt.Sprintf("%s: %d of %d %s (%.0f%%), %s", p.what, p.n, p.total, p.unit, pct, elapsed)
	}
	if p.unit == "bytes" {
		return fmt.Sprintf("%s: %s, %s", p.what, fmtBytes(p.n), elapsed)
	}
	return fmt.Sprintf("%s: %d %s, %s", p.what, p.n, p.unit, elapsed)
}

// fmtBytes writes a byte count with a binary unit: "92.2KiB", "12 bytes".
func fmtBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	s := client.FormatBytes(float64(n))
	return s + "iB"
}

func (p *progress) draw() {
	p.last = time.Now()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", p.line())
		return
	}
	fmt.Fprintln(p.w, p.line())
}

// done draws the final state once.
func (p *progress) done() {
	if p.finished {
		return
	}
	p.finished = true
	p.draw()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
