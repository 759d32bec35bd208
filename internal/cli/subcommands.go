package cli

import (
	"fmt"
	"io"
	"strings"
)

// subcommand is one verb of a command group such as 'longfair account'.
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commandPathError carries the full command path ("account create") an
// error happened in, so that the message names it.
type commandPathError struct {
	path string
	err  error
}

func (e commandPathError) Error() string { return e.err.Error() }
func (e commandPathError) Unwrap() error { return e.err }

// group runs 'longfair NAME VERB …': it dispatches to the verb, and lists
// the verbs on 'longfair NAME', 'longfair NAME help' or --help.
func group(name, about string, subs []subcommand) func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			if len(args) > 1 && args[0] == "help" {
				return group(name, about, subs)(append([]string{args[1]}, "--help"), stdout, stderr)
			}
			groupUsage(stdout, name, about, subs)
			return nil
		}
		for _, s := range subs {
			if s.name == args[0] {
				err := s.run(args[1:], stdout, stderr)
				if err == nil {
					return nil
				}
				if _, ok := err.(commandPathError); ok {
					return err
				}
				return commandPathError{path: name + " " + s.name, err: err}
			}
		}
		var names []string
		for _, s := range subs {
			names = append(names, s.name)
		}
		return Usagef("unknown subcommand %q: 'longfair %s' has %s", args[0], name, strings.Join(names, ", "))
	}
}

func groupUsage(w io.Writer, name, about string, subs []subcommand) {
	fmt.Fprintf(w, "Usage: longfair %s SUBCOMMAND [flags]\n\n%s\n\nSubcommands:\n", name, about)
	width := 0
	for _, s := range subs {
		width = max(width, len(s.name))
	}
	for _, s := range subs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, s.name, s.summary)
	}
	fmt.Fprintf(w, "\nRun 'longfair %s SUBCOMMAND --help' for its flags and an example.\n", name)
}
