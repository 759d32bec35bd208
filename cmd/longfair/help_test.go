package main

import (
	"bytes"
	"net"
	"regexp"
	"strings"
	"testing"
)

// helpText runs 'longfair PATH --help' and returns everything it printed.
func helpText(t *testing.T, path []string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := dispatch(append(append([]string(nil), path...), "--help"), &out, &errOut)
	if code != 0 {
		t.Fatalf("longfair %s --help exited %d: %s", strings.Join(path, " "), code, errOut.String())
	}
	return out.String() + errOut.String()
}

// subcommandsIn reads the verbs a group's help lists.
func subcommandsIn(help string) []string {
	_, list, ok := strings.Cut(help, "Subcommands:\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		names = append(names, strings.Fields(line)[0])
	}
	return names
}

// TestEveryCommandHasHelpWithAnExample walks every command and subcommand
// 'longfair help' lists and checks that its --help shows how to call it
// with at least one example command line.
func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	var top bytes.Buffer
	if code := dispatch([]string{"help"}, &top, &top); code != 0 {
		t.Fatal("longfair help failed")
	}
	var paths [][]string
	for _, line := range strings.Split(top.String(), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "  ") && len(f) > 1 {
			paths = append(paths, []string{f[0]})
		}
	}
	if len(paths) < 20 {
		t.Fatalf("longfair help lists %d commands:\n%s", len(paths), top.String())
	}
	seen := 0
	for len(paths) > 0 {
		p := paths[0]
		paths = paths[1:]
		help := helpText(t, p)
		if subs := subcommandsIn(help); len(subs) > 0 {
			for _, s := range subs {
				paths = append(paths, append(append([]string(nil), p...), s))
			}
			continue
		}
		seen++
		name := strings.Join(p, " ")
		example := regexp.MustCompile(`(?m)^\s+(\./)?longfair ` + regexp.QuoteMeta(name) + `\b`)
		if !example.MatchString(help) {
			t.Errorf("'longfair %s --help' has no example command line:\n%s", name, help)
		}
		if !strings.Contains(help, "Usage: longfair "+name) {
			t.Errorf("'longfair %s --help' does not start with its usage:\n%s", name, help)
		}
	}
	if seen < 35 {
		t.Errorf("checked %d leaf commands; the issue lists more than 35", seen)
	}
}

// closedAddr is a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func TestErrorsAreOneLineWithTheExitCode(t *testing.T) {
	addr := closedAddr(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"jobs", "--no-such-flag"}, 2, "--help"},
		{[]string{"jobs", "--output", "yaml"}, 2, "table, json or csv"},
		{[]string{"job", "show"}, 2, "JOB_ID"},
		{[]string{"job", "show", "abc"}, 2, "not a job number"},
		{[]string{"account", "frobnicate"}, 2, "create, list, show, set-weight"},
		{[]string{"submit", "--account", "a", "--user", "u"}, 2, "after --"},
		{[]string{"submit", "--account", "a", "--user", "u", "--mem", "4X", "--", "true"}, 2, "--mem"},
		{[]string{"grant", "add", "astro", "12.5.1"}, 2, "not a decimal"},
		{[]string{"operator", "snapshot", "restore", "x.snap"}, 2, "--yes"},
		{[]string{"usage", "report", "--from", "now", "--to", "-1d"}, 2, "not before"},
		{[]string{"jobs", "--addr", addr, "--timeout", "2s"}, 1, addr},
		{[]string{"jobs", "--attempt-timeout", "soon"}, 2, "not a duration"},
		{[]string{"nosuchcommand"}, 2, "longfair help"},
	} {
		var out, errOut bytes.Buffer
		code := dispatch(tc.args, &out, &errOut)
		msg := errOut.String()
		if code != tc.code {
			t.Errorf("longfair %v exited %d, want %d (stderr %q)", tc.args, code, tc.code, msg)
		}
		if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
			t.Errorf("longfair %v printed %q: want exactly one line", tc.args, msg)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("longfair %v printed %q: want it to mention %q", tc.args, msg, tc.want)
		}
		if strings.Contains(msg, "rpc error") {
			t.Errorf("longfair %v printed gRPC's wrapping: %q", tc.args, msg)
		}
	}
}
