package cli

import (
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cobraRoot is the command tree Dispatch runs.
type cobraRoot struct{ root *cobra.Command }

// isCobraBuiltin reports the commands cobra adds to the tree itself.
func isCobraBuiltin(name string) bool {
	switch name {
	case "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return true
	}
	return false
}

// rootCommand builds the cobra tree of cmds, in the groups of
// commandGroups, with each command group's verbs as children. Each command
// parses its own options (ParseFlags, with GNU syntax), so cobra passes
// its arguments through untouched: that keeps one option table per
// command and the command line after "--" of submit and run as it was
// typed. Completion offers a command's options from that same table,
// which the command hands over on optionsRequest (optionCompletions).
func rootCommand(cmds map[string]Command, stdout, stderr io.Writer) cobraRoot {
	root := &cobra.Command{
		Use:           "longfair",
		Short:         "long-term fair scheduling for service-unit computing centers",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			usage(stdout, cmds)
			return
		}
		if c.RunE != nil {
			_ = c.RunE(c, []string{"--help"})
			return
		}
		_ = c.Usage()
	})
	group := map[string]string{}
	for _, g := range commandGroups() {
		root.AddGroup(&cobra.Group{ID: g.title, Title: g.title + ":"})
		for _, n := range g.names {
			group[n] = g.title
		}
	}
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := cmds[n]
		var cc *cobra.Command
		if c.Group != nil {
			cc = groupCommand(n, c.Summary, c.Group, stdout, stderr)
		} else {
			cc = leafCommand(n, n, c.Summary, c.Run, stdout, stderr)
		}
		cc.GroupID = group[n]
		root.AddCommand(cc)
	}
	root.SetHelpCommandGroupID("")
	root.SetCompletionCommandGroupID("")
	return cobraRoot{root: root}
}

// leafCommand is a command that runs: path is its full name ("account
// create"), named in its errors.
func leafCommand(name, path, summary string, run func([]string, io.Writer, io.Writer) error, stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              summary,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			err := run(args, stdout, stderr)
			if strings.Contains(path, " ") {
				return withPath(path, err)
			}
			return err
		},
		ValidArgsFunction: func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if !strings.HasPrefix(toComplete, "-") {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return optionCompletions(run, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// groupCommand is a command group with its verbs as children; run bare
// (or with a verb it lacks) it lists them.
func groupCommand(name, summary string, g *cmdGroup, stdout, stderr io.Writer) *cobra.Command {
	cc := &cobra.Command{
		Use:                name,
		Short:              summary,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return g.bare(args, stdout, stderr)
		},
	}
	for _, s := range g.subs {
		if s.group != nil {
			cc.AddCommand(groupCommand(s.name, s.summary, s.group, stdout, stderr))
		} else {
			cc.AddCommand(leafCommand(s.name, g.name+" "+s.name, s.summary, s.run, stdout, stderr))
		}
	}
	return cc
}

// optionCompletions are the options of the command run that start with
// prefix, long and short, each with the first line of its help: run is
// asked for the table it parses with (optionsRequest), so completion and
// parsing cannot disagree. A command that reads its arguments by hand
// (exec, rsh-style) has no table, and gets no option completion.
func optionCompletions(run func([]string, io.Writer, io.Writer) error, prefix string) []cobra.Completion {
	var table optionTable
	if !errors.As(run([]string{optionsRequest}, io.Discard, io.Discard), &table) {
		return nil
	}
	var out []cobra.Completion
	table.flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		_, help := pflag.UnquoteUsage(f)
		desc, _, _ := strings.Cut(help, "\n")
		for _, name := range []string{"--" + f.Name, "-" + f.Shorthand} {
			if name != "-" && strings.HasPrefix(name, prefix) {
				out = append(out, cobra.CompletionWithDesc(name, desc))
			}
		}
	})
	return out
}

// Execute runs the command line args.
func (r cobraRoot) Execute(args []string) error {
	r.root.SetArgs(args)
	return r.root.Execute()
}
