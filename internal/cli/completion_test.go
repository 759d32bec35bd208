package cli

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
func optionNames(pfs *pflag.FlagSet, prefix string) []string {
	var want []string
	pfs.VisitAll(func(f *pflag.Flag) {
		for _, n := range []string{"--" + f.Name, "-" + f.Shorthand} {
			if n != "-" && strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
	})
	slices.Sort(want)
	return want
}

// tableOf asks the command at path for the option table it parses its
// arguments with (optionsRequest), as completion does.
func tableOf(t *testing.T, path ...string) *pflag.FlagSet {
	t.Helper()
	root := rootCommand(Commands(), io.Discard, io.Discard).root
	c, rest, err := root.Find(path)
	if err != nil || len(rest) != 0 || c.RunE == nil || c.HasSubCommands() {
		t.Fatalf("%v is no command of the tree (found %q, rest %v, %v)", path, c.CommandPath(), rest, err)
	}
	var table optionTable
	if err := c.RunE(c, []string{optionsRequest}); !errors.As(err, &table) {
		t.Fatalf("%v answered the options request with %v, not its table", path, err)
	}
	return table.flags
}

// Completion offers a command's options from the table it parses, for a
// top-level command and for a verb of a group, and the verbs of groups,
// nested ones too.
func TestCompletionOffersEachCommandsOwnOptions(t *testing.T) {
	// hold's table, built again here: the client flags of a listing
	// command, so the request's answer is checked against the source too.
	fs := NewFlags("hold")
	(&clientFlags{}).register(fs, true)
	if got, want := completions(t, "hold", "--"), optionNames(GNUFlags(fs), "--"); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("hold --<TAB>: %v, want %v", got, want)
	}
	if got, want := completions(t, "hold", "--t"), optionNames(GNUFlags(fs), "--t"); !slices.Equal(got, want) || len(want) < 2 {
		t.Errorf("hold --t<TAB>: %v, want %v", got, want)
	}
	for _, c := range []struct {
		path    []string
		prefix  string
		atLeast int
	}{
		{[]string{"submit"}, "--no", 1}, // --nodes
		{[]string{"submit"}, "--n", 3},  // --nodes, --ntasks, --ntasks-per-node, --name, ...
		{[]string{"submit"}, "-", 20},   // long and short forms: -N, -t, ...
		{[]string{"account", "create"}, "--", 5},
		{[]string{"account", "list"}, "--o", 1},
		{[]string{"operator", "raft", "list-peers"}, "--", 5},
		{[]string{"sbatch"}, "--ex", 2}, // sbatch's own pflag table: --export, --exclusive
		{[]string{"run"}, "-", 2},
	} {
		want := optionNames(tableOf(t, c.path...), c.prefix)
		if got := completions(t, append(slices.Clone(c.path), c.prefix)...); !slices.Equal(got, want) || len(want) < c.atLeast {
			t.Errorf("%s %s<TAB>: %v, want %v (at least %d)", strings.Join(c.path, " "), c.prefix, got, want, c.atLeast)
		}
	}
	if got := optionNames(tableOf(t, "submit"), "-"); !slices.Contains(got, "-N") || !slices.Contains(got, "--ntasks-per-node") {
		t.Errorf("submit's table lacks -N or --ntasks-per-node: %v", got)
	}
	// Not an option: a command's arguments are left to the shell.
	if got := completions(t, "submit", "no"); len(got) != 0 {
		t.Errorf("submit no<TAB>: %v, want nothing", got)
	}
	if got := completions(t, "account", ""); !slices.Equal(got, []string{"create", "list", "set-group", "set-weight", "show"}) {
		t.Errorf("account <TAB>: %v", got)
	}
	if got := completions(t, "operator", "raft", ""); !slices.Equal(got, []string{"add-peer", "list-peers", "remove-peer"}) {
		t.Errorf("operator raft <TAB>: %v", got)
	}
}

// Every command of the tree hands over its option table when completion
// asks, so none is left without option completion by a Run that drops
// the parser's answer; the one that reads its arguments by hand (exec,
// rsh-style) refuses the request as a usage error without running.
func TestEveryCommandAnswersTheOptionsRequest(t *testing.T) {
	handParsed := map[string]bool{"exec": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			name := strings.TrimPrefix(sub.CommandPath(), "longfair ")
			switch {
			case sub.HasSubCommands():
				walk(sub)
			case isCobraBuiltin(sub.Name()) || sub.Name() == "help":
			case handParsed[name]:
				var ue UsageError
				if err := sub.RunE(sub, []string{optionsRequest}); !errors.As(err, &ue) {
					t.Errorf("%s: options request answered with %v, want a usage error", name, err)
				}
			default:
				var table optionTable
				err := sub.RunE(sub, []string{optionsRequest})
				if !errors.As(err, &table) || !table.flags.HasAvailableFlags() {
					t.Errorf("%s: options request answered with %v, want its option table", name, err)
				}
			}
		}
	}
	walk(rootCommand(Commands(), io.Discard, io.Discard).root)
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

// asLongfair, set in its environment, makes the test binary the longfair
// command (TestCompletionHelperProcess), for the shell that completes.
const asLongfair = "LONGFAIR_TEST_AS_CLI"

// TestCompletionHelperProcess is not a test: run with asLongfair set, it
// runs the command line after "--" as the binary does and exits.
func TestCompletionHelperProcess(t *testing.T) {
	if os.Getenv(asLongfair) != "1" {
		t.Skip("the longfair command of TestBashCompletesOptionsAndVerbs")
	}
	args := os.Args
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[i+1:]
	}
	os.Exit(Main(Commands(), append([]string{"longfair"}, args...), os.Stdout, os.Stderr))
}

// Real bash completes with the script 'longfair completion bash' writes:
// the function 'complete -p longfair' names, called as bash calls it
// after a TAB, fills COMPREPLY with the command's options from its table
// and with a group's verbs. Cobra's script needs bash-completion's word
// splitting (_get_comp_words_by_ref), as a user's shell has it.
func TestBashCompletesOptionsAndVerbs(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("no bash-completion on this machine (Debian: apt-get install bash-completion)")
	}
	var script, errOut strings.Builder
	if code := dispatch([]string{"completion", "bash"}, &script, &errOut); code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, errOut.String())
	}
	path := filepath.Join(t.TempDir(), "longfair.bash")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The script runs the command named by the line's first word: a
	// function that runs this test binary as longfair.
	const driver = `source "$3"
source "$1"
self=$2
longfair() { ` + asLongfair + `=1 "$self" -test.run='^TestCompletionHelperProcess$' -- "$@"; }
spec=$(complete -p longfair) || exit 3
fn=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
shift 3
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=37
"$fn" longfair "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
	complete := func(words ...string) []string {
		cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", driver, "driver", path, self, bashCompletion}, words...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash completing %v: %v", words, err)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	if got, want := complete("longfair", "submit", "--n"), optionNames(tableOf(t, "submit"), "--n"); !slices.Equal(got, want) || len(want) < 3 {
		t.Errorf("bash: longfair submit --n<TAB>: %v, want %v", got, want)
	}
	if got, want := complete("longfair", "account", "create", "--c"), optionNames(tableOf(t, "account", "create"), "--c"); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("bash: longfair account create --c<TAB>: %v, want %v", got, want)
	}
	if got := complete("longfair", "operator", "raft", "l"); !slices.Equal(got, []string{"list-peers"}) {
		t.Errorf("bash: longfair operator raft l<TAB>: %v, want [list-peers]", got)
	}
}
