package cli

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// completions asks the tree what completes the last word of words, as a
// shell's completion script does (cobra's __complete), and returns the
// candidates without their descriptions.
func completions(t *testing.T, words ...string) []string {
	t.Helper()
	var out, errOut strings.Builder
	if code := dispatch(append([]string{"__complete"}, words...), &out, &errOut); code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", words, code, errOut.String())
	}
	var got []string
	for _, line := range strings.Split(out.String(), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		name, _, _ := strings.Cut(line, "\t")
		got = append(got, name)
	}
	slices.Sort(got)
	return got
}

// optionNames are the options of a flag table, long and short, that
// start with prefix: what completion must offer.
func optionNames(fs *flag.FlagSet, prefix string) []string {
	var want []string
	GNUFlags(fs).VisitAll(func(f *pflag.Flag) {
		for _, n := range []string{"--" + f.Name, "-" + f.Shorthand} {
			if n != "-" && strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
	})
	slices.Sort(want)
	return want
}

// Completion offers a command's options from the table it parses, for a
// top-level command and for a verb of a group, and the verbs of groups,
// nested ones too.
func TestCompletionOffersEachCommandsOwnOptions(t *testing.T) {
	// hold's table: the client flags of a listing command.
	fs := NewFlags("hold")
	(&clientFlags{}).register(fs, true)
	if got, want := completions(t, "hold", "--"), optionNames(fs, "--"); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("hold --<TAB>: %v, want %v", got, want)
	}
	if got, want := completions(t, "hold", "--t"), optionNames(fs, "--t"); !slices.Equal(got, want) || len(want) < 2 {
		t.Errorf("hold --t<TAB>: %v, want %v", got, want)
	}
	// A verb's options: account list's table is a listing command's too.
	if got, want := completions(t, "account", "list", "--o"), optionNames(fs, "--o"); !slices.Equal(got, want) {
		t.Errorf("account list --o<TAB>: %v, want %v", got, want)
	}
	if got := completions(t, "submit", "--no"); !slices.Contains(got, "--nodes") {
		t.Errorf("submit --no<TAB>: %v, want --nodes among them", got)
	}
	if got := completions(t, "account", ""); !slices.Equal(got, []string{"create", "list", "set-group", "set-weight", "show"}) {
		t.Errorf("account <TAB>: %v", got)
	}
	if got := completions(t, "operator", "raft", ""); !slices.Equal(got, []string{"add-peer", "list-peers", "remove-peer"}) {
		t.Errorf("operator raft <TAB>: %v", got)
	}
}

// The bash script cobra writes is valid bash.
func TestCompletionScriptIsValidBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	var out, errOut strings.Builder
	if code := dispatch([]string{"completion", "bash"}, &out, &errOut); code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, errOut.String())
	}
	script := filepath.Join(t.TempDir(), "longfair.bash")
	if err := os.WriteFile(script, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n rejects the completion script: %v\n%s", err, b)
	}
}

// Groups are cobra children: 'help GROUP VERB', 'GROUP help VERB' and a
// nested group's verb show the verb's help; an unknown verb is a usage
// error naming the verbs.
func TestGroupVerbsAreChildren(t *testing.T) {
	for _, args := range [][]string{{"help", "account", "create"}, {"account", "help", "create"}, {"account", "create", "--help"}} {
		var out, errOut strings.Builder
		if code := dispatch(args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "Usage: longfair account create") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
	var out, errOut strings.Builder
	if code := dispatch([]string{"operator", "raft", "list-peers", "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "list-peers") {
		t.Errorf("operator raft list-peers --help: exit %d, %q", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := dispatch([]string{"acl", "token", "nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "'longfair acl token' has create, list, revoke") {
		t.Errorf("acl token nope: exit %d, %q", code, errOut.String())
	}
}
