package cli

import (
	"fmt"
	"strings"
	"testing"
)

// countingWriter counts the Write calls it gets.
type countingWriter struct {
	strings.Builder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// A listing reaches stdout in one write, aligned: a 50-job listing costs
// one system call instead of one per cell and per run of padding.
func TestWriteTableWritesTheTableAtOnce(t *testing.T) {
	tab := table{header: []string{"ID", "ACCOUNT", "NAME", "STATE"}}
	for i := range 50 {
		tab.add(fmt.Sprint(600-i), "astro", strings.Repeat("n", i%7), "pending")
	}
	var w countingWriter
	if err := writeTable(&w, "table", tab); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("writeTable made %d writes, want 1", w.writes)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 51 {
		t.Fatalf("%d lines, want a header and 50 rows:\n%s", len(lines), w.String())
	}
	// Aligned: every row's STATE starts where the header's does.
	col := strings.Index(lines[0], "STATE")
	for _, l := range lines[1:] {
		if strings.Index(l, "pending") != col {
			t.Fatalf("the columns are not aligned:\n%s", w.String())
		}
	}
}
