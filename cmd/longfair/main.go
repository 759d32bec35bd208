// Command longfair is the one binary of longfair: servers, workers, the
// simulator and the user and admin commands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand: what it does in one line, and how to run it.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"sim":    {"replay a workload through the policy engine with a virtual clock", runSim},
		"server": {"run a member of the Raft server group (the ledger and the gRPC API)", runServer},
		"worker": {"run the worker agent of a compute node (runs the tasks placed on it)", runWorker},
	}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0] and returns the exit code.
func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "longfair: unknown command %q; run 'longfair help' for the list\n", args[0])
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "longfair %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "longfair — long-term fair scheduling for service-unit computing centers")
	fmt.Fprintln(w, "\nUsage: longfair COMMAND [flags]\n\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'longfair COMMAND --help' for a command's flags and an example.")
}
