package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func groupGroup() *cmdGroup {
	return group("group", "Arranges accounts in the account tree the hdrf and dff policies share the cluster over: groups (organisations, then groups within them) with weights, accounts as leaves.", []subcommand{
		{"set-weight", "create a group or change its weight", groupSetWeightCommand(), nil},
		{"list", "list the groups with their weights and members", groupListCommand(), nil},
		{"remove", "remove an empty group", groupRemoveCommand(), nil},
		{"tree", "show the account tree with DFF's fair resources and H-DRF's dominant shares", groupTreeCommand(), nil},
	})
}

const groupSetWeightHelp = `Usage: longfair group set-weight PATH WEIGHT [flags]

Creates a group of the account tree, or changes its weight among its
siblings. A group is named by its path from the root: "physics", or
"physics/theory" for a group within physics. Groups of the path that do not
exist yet are created with weight 1. Accounts join groups with 'longfair
account set-group'. Only the hdrf and dff policies use the tree.

Examples:
  longfair group set-weight physics 3
  longfair group set-weight physics/theory 1
`

func groupSetWeightCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("group set-weight", groupSetWeightHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("group set-weight", args, 2, 2, "PATH WEIGHT"); err != nil {
			return err
		}
		w, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			return Usagef("weight %q is not a number", args[1])
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		g, err := c.SetGroupWeight(ctx, args[0], w)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "group %s: weight %s\n", g.GetPath(), fmtNumber(g.GetWeight()))
			return nil
		}
		return writeListing(out.stdout, f.output, groupsTable([]*longfairv1.Group{g}), g)
	})
}

func groupsTable(list []*longfairv1.Group) table {
	t := table{header: []string{"GROUP", "WEIGHT", "ACCOUNTS", "GROUPS", "CREATED"}}
	for _, g := range list {
		t.add(g.GetPath(), fmtNumber(g.GetWeight()), orDash(strings.Join(g.GetAccounts(), ",")), orDash(strings.Join(g.GetGroups(), ",")), fmtTime(g.GetCreatedAt()))
	}
	return t
}

const groupListHelp = `Usage: longfair group list [flags]

Lists the groups of the account tree by path, with their weights and their
direct members (accounts and groups).

Example:
  longfair group list
`

func groupListCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("group list", groupListHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("group list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Groups().ListGroups(ctx, &longfairv1.ListGroupsRequest{})
		if err != nil {
			return err
		}
		if len(resp.GetGroups()) == 0 && (f.output == "table" || f.output == "") {
			fmt.Fprintln(out.stdout, "no groups: every account sits under the root; create one with 'longfair group set-weight PATH WEIGHT'")
			return nil
		}
		return writeListing(out.stdout, f.output, groupsTable(resp.GetGroups()), messages(resp.GetGroups()))
	})
}

const groupRemoveHelp = `Usage: longfair group remove PATH [flags]

Removes a group of the account tree. A group that still holds accounts or
groups is refused: move its accounts elsewhere first.

Example:
  longfair group remove physics/theory
`

func groupRemoveCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("group remove", groupRemoveHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("group remove", args, 1, 1, "PATH"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		g, err := c.Groups().RemoveGroup(ctx, &longfairv1.RemoveGroupRequest{Path: args[0]})
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "removed group %s\n", g.GetPath())
			return nil
		}
		return writeListing(out.stdout, f.output, groupsTable([]*longfairv1.Group{g}), g)
	})
}

const groupTreeHelp = `Usage: longfair group tree [flags]

Shows the account tree as the next scheduling pass would begin: every
group and account with its weight and share among its siblings, what its
subtree runs, DFF's fair resource and fairness f (below 1: it holds less
than its fair share, so it goes first under dff), and H-DRF's weighted
dominant share (smallest goes first under hdrf). Same as 'longfair
fairness --tree'.

Example:
  longfair group tree
  longfair group tree --output json
`

func groupTreeCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("group tree", groupTreeHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("group tree", args, 0, 0, ""); err != nil {
			return err
		}
		return showAccountTree(ctx, c, f, out.stdout)
	})
}

const accountSetGroupHelp = `Usage: longfair account set-group ACCOUNT GROUP [flags]
       longfair account set-group ACCOUNT --root [flags]

Moves an account into a group of the account tree ("physics" or
"physics/theory"; created with weight 1 if it does not exist), or back
under the root. Within its group the account is weighted by its own weight.
Only the hdrf and dff policies use the tree.

Examples:
  longfair account set-group astro physics/theory
  longfair account set-group astro --root
`

func accountSetGroupCommand() func(args []string, stdout, stderr io.Writer) error {
	var root bool
	setup := func(fs *flag.FlagSet) {
		fs.BoolVar(&root, "root", false, "move the account under the root, out of any group")
	}
	return clientCommand("account set-group", accountSetGroupHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("account set-group", args, 1, 2, "ACCOUNT GROUP"); err != nil {
			return err
		}
		group := ""
		switch {
		case len(args) == 2 && root:
			return Usagef("both a GROUP and --root: give one")
		case len(args) == 2:
			group = args[1]
		case !root:
			return Usagef("no group: give the GROUP path, or --root to move %s out of any group", args[0])
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		a, err := c.SetAccountGroup(ctx, args[0], group)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "account %s is in %s\n", a.GetName(), groupName(a.GetGroup()))
			return nil
		}
		return writeListing(out.stdout, f.output, accountsTable([]*longfairv1.Account{a}), a)
	})
}

// groupName names a group for messages; "" is the root.
func groupName(path string) string {
	if path == "" {
		return "the root"
	}
	return "group " + path
}
