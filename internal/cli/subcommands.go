package cli

import (
	"fmt"
	"io"
	"strings"
)

// cmdGroup is a command of verbs such as 'longfair account': each verb
// is a cobra child command (root.go), so help, completion and dispatch
// come from one tree.
type cmdGroup struct {
	name, about string
	subs        []subcommand
}

// subcommand is one verb of a command group: a command (run) or a group
// of its own ('longfair operator raft').
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
	group   *cmdGroup
}

// group is the command group name ("account", "operator raft") with its
// verbs.
func group(name, about string, subs []subcommand) *cmdGroup {
	return &cmdGroup{name: name, about: about, subs: subs}
}

// commandPathError carries the full command path ("account create") an
// error happened in, so that the message names it.
type commandPathError struct {
	path string
	err  error
}

func (e commandPathError) Error() string { return e.err.Error() }
func (e commandPathError) Unwrap() error { return e.err }

// withPath names path in err unless a deeper command named itself.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(commandPathError); ok {
		return err
	}
	return commandPathError{path: path, err: err}
}

// bare runs 'longfair NAME' with no verb, or with one it does not have:
// it lists the verbs on no argument, --help or 'help', shows a verb's
// help on 'help VERB', and refuses anything else.
func (g *cmdGroup) bare(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" && len(args) == 1 {
		g.usage(stdout)
		return nil
	}
	if args[0] == "help" {
		for _, s := range g.subs {
			switch {
			case s.name != args[1]:
			case s.group != nil:
				s.group.usage(stdout)
				return nil
			default:
				return withPath(g.name+" "+s.name, s.run([]string{"--help"}, stdout, stderr))
			}
		}
	}
	var names []string
	for _, s := range g.subs {
		names = append(names, s.name)
	}
	verb := args[0]
	if verb == "help" {
		verb = args[1]
	}
	return withPath(g.name, Usagef("unknown subcommand %q: 'longfair %s' has %s", verb, g.name, strings.Join(names, ", ")))
}

func (g *cmdGroup) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: longfair %s SUBCOMMAND [flags]\n\n%s\n\nSubcommands:\n", g.name, g.about)
	width := 0
	for _, s := range g.subs {
		width = max(width, len(s.name))
	}
	for _, s := range g.subs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, s.name, s.summary)
	}
	fmt.Fprintf(w, "\nRun 'longfair %s SUBCOMMAND --help' for its flags and an example.\n", g.name)
}
