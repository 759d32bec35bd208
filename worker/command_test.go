package worker

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// An argv command reaches the program exactly, whatever characters its
// arguments hold; a one-element command is shell text.
func TestShellScriptKeepsArguments(t *testing.T) {
	args := []string{"printf", `%s\n`, "plain", "two words", "it's", `$HOME`, "a\"b", "", "*", "new\nline", "back\\slash"}
	out, err := exec.Command("/bin/sh", "-c", shellScript(args)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{"plain", "two words", "it's", "$HOME", "a\"b", "", "*", "new", "line", "back\\slash"}
	if !slices.Equal(got, want) {
		t.Fatalf("printf saw %q, want %q", got, want)
	}
	out, err = exec.Command("/bin/sh", "-c", shellScript([]string{"echo a && echo b"})).Output()
	if err != nil || string(out) != "a\nb\n" {
		t.Fatalf("shell text ran as %q, %v", out, err)
	}
}
