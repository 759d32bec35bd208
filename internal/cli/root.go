package cli

import (
	"io"
	"sort"

	"github.com/spf13/cobra"
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
// commandGroups. Each command parses its own options (ParseFlags, with
// GNU syntax), so cobra passes its arguments through untouched: that keeps
// one option table per command and the command line after "--" of submit
// and run as it was typed.
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
		root.AddCommand(&cobra.Command{
			Use:                n,
			Short:              c.Summary,
			GroupID:            group[n],
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				return c.Run(args, stdout, stderr)
			},
		})
	}
	root.SetHelpCommandGroupID("")
	root.SetCompletionCommandGroupID("")
	return cobraRoot{root: root}
}

// Execute runs the command line args.
func (r cobraRoot) Execute(args []string) error {
	r.root.SetArgs(args)
	return r.root.Execute()
}
