package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// dispatch runs the user and admin commands in the test's process, as the
// binary does.
func dispatch(args []string, stdout, stderr io.Writer) int {
	return Dispatch(Commands(), args, stdout, stderr)
}

// Run under a Slurm command's name (a link named sbatch), the binary is
// the longfair command that name maps to, with every argument; each
// name maps to a command that exists.
func TestSlurmNamesRunTheirCommands(t *testing.T) {
	cmds := Commands()
	for name, target := range slurmNames() {
		if _, ok := cmds[target]; !ok {
			t.Errorf("%s maps to %q, which is no command", name, target)
			continue
		}
		var viaName, direct, stderr bytes.Buffer
		if code := Main(cmds, []string{filepath.Join("/some/bin", name), "--help"}, &viaName, &stderr); code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, code, stderr.String())
		}
		if code := Main(cmds, []string{"longfair", target, "--help"}, &direct, &stderr); code != 0 {
			t.Fatalf("longfair %s --help: exit %d: %s", target, code, stderr.String())
		}
		if viaName.Len() == 0 || viaName.String() != direct.String() {
			t.Errorf("%s --help printed\n%s\nnot what longfair %s --help prints:\n%s", name, viaName.String(), target, direct.String())
		}
	}
	// Under its own name, or any other, argv[1] names the command.
	var out, stderr bytes.Buffer
	if code := Main(cmds, []string{"/opt/longfair", "sbatch"}, &out, &stderr); code != 2 || !strings.Contains(stderr.String(), "longfair sbatch: give the batch script") {
		t.Errorf("longfair sbatch without a script: exit %d, %q", code, stderr.String())
	}
}
