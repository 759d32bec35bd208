// Package deploy_test checks that the deployment files in this directory
// match the code they describe: config.md names the server's real flags,
// the systemd units call flags and commands that exist, and systemd's own
// checker accepts them. (That the example configuration loads and that
// config.md documents every field with its default is checked where the
// CLI's configuration code is: internal/cli/daemon/deploy_test.go.)
package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/longfair/longfair/internal/testcluster"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// flagsOf returns the flags 'longfair ARGS --help' lists.
func flagsOf(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	out, _ := exec.Command(bin, append(args, "--help")...).CombinedOutput()
	var flags []string
	// GNU style: "  -c, --cpu N   …" or "      --acl   …".
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, "--"+m[1])
	}
	if len(flags) == 0 {
		t.Fatalf("longfair %s --help lists no flags:\n%s", strings.Join(args, " "), out)
	}
	return flags
}

// execFlags returns the --flags of a unit's ExecStart lines, with
// continuation lines joined.
func execFlags(t *testing.T, unit string) (flags []string, commands []string) {
	t.Helper()
	text := strings.ReplaceAll(read(t, unit), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "ExecStart=") {
			continue
		}
		commands = append(commands, strings.TrimPrefix(line, "ExecStart="))
		for _, m := range regexp.MustCompile(`(?:^|\s)(--[a-z0-9-]+)`).FindAllStringSubmatch(line, -1) {
			flags = append(flags, m[1])
		}
	}
	return flags, commands
}

// TestDocsAndUnitsNameRealFlags runs the real binary's --help and checks
// that config.md names every server flag and no flag that does not exist,
// and that the units and the worker's environment file call only flags
// the commands take.
func TestDocsAndUnitsNameRealFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the longfair binary")
	}
	bin := testcluster.Binary(t)
	serverFlags := flagsOf(t, bin, "server")
	workerFlags := flagsOf(t, bin, "worker")

	doc := read(t, "config.md")
	for _, f := range serverFlags {
		if !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("'longfair server' takes %s, which deploy/config.md does not mention: add it to its field's row or to the flags-only table", f)
		}
	}
	for _, m := range regexp.MustCompile("`(--[a-z0-9-]+)`").FindAllStringSubmatch(doc, -1) {
		if !slices.Contains(serverFlags, m[1]) {
			t.Errorf("deploy/config.md names %s, which 'longfair server' does not take", m[1])
		}
	}

	check := func(what string, flags, known []string) {
		t.Helper()
		for _, f := range flags {
			if !slices.Contains(known, f) {
				t.Errorf("%s uses %s, which the command does not take", what, f)
			}
		}
	}
	flags, _ := execFlags(t, "systemd/longfair-server@.service")
	check("longfair-server@.service", flags, serverFlags)
	flags, _ = execFlags(t, "systemd/longfair-worker.service")
	check("longfair-worker.service", flags, workerFlags)

	// The worker unit's variables all come from the environment file.
	env := map[string]string{}
	for _, line := range strings.Split(read(t, "worker.example.env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	for _, m := range regexp.MustCompile(`\$\{?([A-Z_]+)\}?`).FindAllStringSubmatch(read(t, "systemd/longfair-worker.service"), -1) {
		if _, ok := env[m[1]]; !ok {
			t.Errorf("longfair-worker.service uses $%s, which worker.example.env does not set", m[1])
		}
	}
	var extra []string
	for _, w := range strings.Fields(env["LONGFAIR_WORKER_FLAGS"]) {
		if strings.HasPrefix(w, "--") {
			extra = append(extra, w)
		}
	}
	check("LONGFAIR_WORKER_FLAGS in worker.example.env", extra, workerFlags)

	// The backup unit's commands.
	_, commands := execFlags(t, "systemd/longfair-backup.service")
	if len(commands) != 2 {
		t.Fatalf("longfair-backup.service runs %d commands, want save then verify", len(commands))
	}
	saveFlags := flagsOf(t, bin, "operator", "snapshot", "save")
	for _, m := range regexp.MustCompile(`(?:^|\s)(--[a-z0-9-]+)`).FindAllStringSubmatch(commands[0], -1) {
		check("the backup's snapshot save", []string{m[1]}, saveFlags)
	}
	if !strings.Contains(commands[0], "longfair operator snapshot save") || !strings.Contains(commands[1], "longfair ledger verify") {
		t.Errorf("the backup unit runs %q", commands)
	}
}

// TestSystemdUnitsVerify has systemd's own checker read the units, in a
// private root holding the host's system units and stand-ins for the
// programs the units run.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; the units are checked on machines that have systemd")
	}
	root := t.TempDir()
	unitDir := filepath.Join(root, "etc", "systemd", "system")
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	libDir := filepath.Join(root, "usr", "lib", "systemd")
	if err := os.MkdirAll(libDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", "/usr/lib/systemd/system", libDir+"/").CombinedOutput(); err != nil {
		t.Skipf("cannot copy the host's system units for systemd-analyze: %v %s", err, out)
	}
	units, err := filepath.Glob("systemd/*")
	if err != nil || len(units) < 4 {
		t.Fatalf("units: %v %v", units, err)
	}
	var names []string
	for _, u := range units {
		text := read(t, u)
		if err := os.WriteFile(filepath.Join(unitDir, filepath.Base(u)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, commands := execFlags(t, u)
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "ExecStartPost=") {
				commands = append(commands, strings.TrimPrefix(line, "ExecStartPost="))
			}
		}
		for _, c := range commands {
			prog := filepath.Join(root, strings.Fields(c)[0])
			if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		name := filepath.Base(u)
		if strings.HasSuffix(name, "@.service") {
			name = strings.TrimSuffix(name, "@.service") + "@s1.service"
		}
		names = append(names, name)
	}
	out, _ := exec.Command(analyze, append([]string{"verify", "--root=" + root}, names...)...).CombinedOutput()
	if msg := strings.TrimSpace(string(out)); msg != "" {
		t.Errorf("systemd-analyze verify %v:\n%s", names, msg)
	}
}
