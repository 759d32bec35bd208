package cli

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

// TestParseGNUForms checks the option syntaxes users type: long with a
// space or "=", short with a space or glued, grouped short booleans, and
// the command after "--" left alone.
func TestParseGNUForms(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		nodes      int
		hold, wait bool
		pos, rest  []string
		err        string
	}{
		{args: []string{"--nodes", "2"}, nodes: 2},
		{args: []string{"--nodes=3"}, nodes: 3},
		{args: []string{"-N", "4"}, nodes: 4},
		{args: []string{"-N5"}, nodes: 5},
		{args: []string{"-Hw"}, nodes: 1, hold: true, wait: true},
		{args: []string{"x", "-N", "2", "y", "--", "cmd", "-N", "9"}, nodes: 2, pos: []string{"x", "y"}, rest: []string{"cmd", "-N", "9"}},
		{args: []string{"-nodes", "2"}, err: "two dashes: --nodes"},
		{args: []string{"--nope"}, err: "unknown flag: --nope"},
	} {
		fs := NewFlags("t")
		var nodes int
		var hold, wait bool
		fs.IntVar(&nodes, "nodes", 1, "nodes")
		fs.BoolVar(&hold, "hold", false, "hold")
		fs.BoolVar(&wait, "wait", false, "wait")
		aliasFlag(fs, "N", "nodes")
		aliasFlag(fs, "H", "hold")
		aliasFlag(fs, "w", "wait")
		pos, rest, err := ParseGNU(fs, tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if nodes != tc.nodes || hold != tc.hold || wait != tc.wait || !slices.Equal(pos, tc.pos) || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: nodes %d hold %v wait %v pos %q rest %q", tc.args, nodes, hold, wait, pos, rest)
		}
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "nodes" })
		if given != (tc.nodes != 1) {
			t.Errorf("%q: flag.Visit saw nodes given=%v", tc.args, given)
		}
	}
	if _, _, err := ParseGNU(NewFlags("t"), []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}

// TestHelpShowsGNUOptions checks that --help lists "-N, --nodes".
func TestHelpShowsGNUOptions(t *testing.T) {
	var out, errOut strings.Builder
	if code := dispatch([]string{"submit", "--help"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"-N, --nodes", "-a, --array", "-H, --hold", "--begin"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("submit --help lacks %q", want)
		}
	}
	out.Reset()
	if code := dispatch([]string{"completion", "bash"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "longfair") {
		t.Errorf("completion bash: exit %d, %d bytes", code, out.Len())
	}
}
