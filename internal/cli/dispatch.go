package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"

	"github.com/longfair/longfair/core"
)

// Command is one subcommand: what it does in one line, and how to run it.
type Command struct {
	Summary string
	Run     func(args []string, stdout, stderr io.Writer) error
	// Group, instead of Run, makes the command a group of verbs
	// ('longfair account create').
	Group *cmdGroup
}

// FullBinaryOnly reports whether name is one of the commands cmd/longfair
// adds to Commands (the daemons, the dev cluster, the simulator): the
// client binary (cmd/longfair-client) says where they are.
func FullBinaryOnly(name string) bool {
	switch name {
	case "server", "worker", "convert-log", "dev", "sim":
		return true
	}
	return false
}

// Commands are the user and admin commands, which call the cluster through
// package client; the binary adds the daemons and the simulator
// (cmd/longfair).
func Commands() map[string]Command {
	return map[string]Command{
		"status": {Summary: "servers, leader, Raft health, and workers with free and used resources", Run: statusCommand()},
		"nodes":  {Summary: "worker nodes with their capacity, used resources and running tasks", Run: nodesCommand()},

		"submit":   {Summary: "submit a job array: resources, walltime, account, command after --", Run: submitCommand()},
		"sbatch":   {Summary: "submit a Slurm batch script: #SBATCH options, SLURM_* variables", Run: sbatchCommand()},
		"jobs":     {Summary: "list jobs with their task counts", Run: jobsCommand()},
		"job":      {Summary: "show or watch one job", Group: jobGroup()},
		"cancel":   {Summary: "cancel jobs", Run: cancelCommand()},
		"hold":     {Summary: "hold jobs: they start no more tasks until released", Run: holdCommand()},
		"release":  {Summary: "release held jobs", Run: releaseCommand()},
		"squeue":   {Summary: "pending and running jobs with why they wait, as Slurm's squeue shows them", Run: squeueCommand()},
		"sacct":    {Summary: "accounting for jobs and their attempts, as Slurm's sacct shows it", Run: sacctCommand()},
		"requeue":  {Summary: "stop a job's running tasks and queue them to run again", Run: requeueCommand()},
		"signal":   {Summary: "send a signal to a job's running processes (like scancel --signal)", Run: signalCommand()},
		"update":   {Summary: "change a job: name, lower walltime, dependency, throttle, nice", Run: updateCommand()},
		"logs":     {Summary: "print a task's output", Run: logsCommand()},
		"fairness": {Summary: "per account: weight, share, Ü, β, pending and running (the sshare of longfair)", Run: fairnessCommand()},
		"balance":  {Summary: "service-unit balances of accounts", Run: balanceCommand()},
		"explain":  {Summary: "why a pending job has not started", Run: explainCommand()},
		"exec":     {Summary: "inside a parallel task: run a command on another of its nodes (an rsh for mpiexec)", Run: execCommand()},
		"run":      {Summary: "inside a parallel task: start a command as its processes across its nodes (like srun)", Run: runCommand()},

		"account":  {Summary: "create, list, show accounts; set their weights", Group: accountGroup()},
		"user":     {Summary: "create and list users; manage their accounts", Group: userGroup()},
		"limits":   {Summary: "limit what an account or a user runs and submits", Group: limitsGroup()},
		"grant":    {Summary: "credit service units to accounts; list grants", Group: grantGroup()},
		"ledger":   {Summary: "show, verify and export the SU journal", Group: ledgerGroup()},
		"usage":    {Summary: "usage and charges over a time range, by account or user", Group: usageGroup()},
		"policy":   {Summary: "show and set the scheduling policy and settings", Group: policyGroup()},
		"group":    {Summary: "arrange accounts in the account tree of hdrf and dff", Group: groupGroup()},
		"queue":    {Summary: "declare latency queues of bpf and sp (admission control)", Group: queueGroup()},
		"acl":      {Summary: "create, list and revoke API tokens", Group: aclGroup()},
		"operator": {Summary: "Raft peers and snapshots of the cluster state", Group: operatorGroup()},
	}
}

// commandGroups orders the commands in 'longfair help' the way users look
// for them. A command in no group is listed under "Other".
func commandGroups() []struct {
	title string
	names []string
} {
	return []struct {
		title string
		names []string
	}{
		{"Cluster", []string{"server", "worker", "dev", "status", "nodes"}},
		{"Users", []string{"submit", "sbatch", "jobs", "job", "cancel", "hold", "release", "requeue", "signal", "update", "logs", "fairness", "balance", "explain", "squeue", "sacct", "exec", "run"}},
		{"Admins", []string{"account", "user", "limits", "grant", "ledger", "usage", "policy", "group", "queue", "acl", "operator"}},
		{"Simulation", []string{"sim"}},
	}
}

func jobGroup() *cmdGroup {
	return group("job", "Shows or follows one job.", []subcommand{
		{"show", "show a job and its tasks", jobShowCommand(), nil},
		{"watch", "follow a job until it ends", jobWatchCommand(), nil},
	})
}

// slurmNames maps the Slurm commands the binary answers to, when it is
// run under their name (a symlink named sbatch on PATH), to the longfair
// command that does their work; a Slurm user's scripts that call sbatch
// and scancel then run unchanged. One row per command.
func slurmNames() map[string]string {
	return map[string]string{
		"sbatch":  "sbatch",
		"scancel": "cancel",
		"sacct":   "sacct",
		"squeue":  "squeue",
	}
}

// Main runs the binary's whole command line, argv[0] included: run under
// one of the Slurm names (slurmNames) it runs the longfair command of
// that name with every argument; otherwise argv[1] names the command.
func Main(cmds map[string]Command, argv []string, stdout, stderr io.Writer) int {
	if len(argv) == 0 {
		return Dispatch(cmds, nil, stdout, stderr)
	}
	if name, ok := slurmNames()[filepath.Base(argv[0])]; ok {
		return Dispatch(cmds, append([]string{name}, argv[1:]...), stdout, stderr)
	}
	return Dispatch(cmds, argv[1:], stdout, stderr)
}

// Dispatch runs the subcommand of cmds named by args[0] and returns the exit code:
// 0 on success, 1 when the command failed, 2 when it was called wrongly.
// An error is printed as one line on stderr. The commands form a cobra
// tree (root.go), which adds 'longfair completion bash|zsh|fish'.
func Dispatch(cmds map[string]Command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 && args[0] == "help" {
			return Dispatch(cmds, append(slices.Clone(args[1:]), "--help"), stdout, stderr)
		}
		usage(stdout, cmds)
		return 0
	}
	if _, ok := cmds[args[0]]; !ok && !isCobraBuiltin(args[0]) {
		if FullBinaryOnly(args[0]) {
			fmt.Fprintf(stderr, "longfair: %q is not in this binary, which has the user and admin commands alone (longfair-client): run it with the full longfair binary\n", args[0])
			return 2
		}
		fmt.Fprintf(stderr, "longfair: unknown command %q; run 'longfair help' for the list\n", args[0])
		return 2
	}
	err := rootCommand(cmds, stdout, stderr).Execute(args)
	if err == nil || errors.Is(err, ErrHelpShown) {
		return 0
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	path := args[0]
	var pe commandPathError
	if errors.As(err, &pe) {
		path = pe.path
	}
	// Escaped: the message may quote what a server sent, and it is one line.
	fmt.Fprintf(stderr, "longfair %s: %s\n", path, core.Escape(err.Error()))
	var ue UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func usage(w io.Writer, cmds map[string]Command) {
	fmt.Fprintln(w, "longfair — long-term fair scheduling for service-unit computing centers")
	fmt.Fprintln(w, "\nUsage: longfair COMMAND [SUBCOMMAND] [flags]")
	listed := map[string]bool{}
	printGroup := func(title string, names []string) {
		var have []string
		for _, n := range names {
			if _, ok := cmds[n]; ok {
				have = append(have, n)
				listed[n] = true
			}
		}
		if len(have) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, n := range have {
			fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].Summary)
		}
	}
	for _, g := range commandGroups() {
		printGroup(g.title, g.names)
	}
	var other []string
	for n := range cmds {
		if !listed[n] {
			other = append(other, n)
		}
	}
	sort.Strings(other)
	printGroup("Other", other)
	fmt.Fprintln(w, "\nCommands that call the cluster find it in --addr or LONGFAIR_ADDR (host:port,")
	fmt.Fprintln(w, "comma-separated; default 127.0.0.1:7410) and send --token or LONGFAIR_TOKEN.")
	fmt.Fprintln(w, "Listings take --output table, json or csv. 'longfair dev' starts a local cluster.")
	fmt.Fprintln(w, "\nRun 'longfair COMMAND --help' for a command's flags and an example.")
}
