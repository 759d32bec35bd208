package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func userGroup() *cmdGroup {
	return group("user", "Manages users and the accounts they may charge.", []subcommand{
		{"create", "add a user, optionally as a member of accounts", userCreateCommand(), nil},
		{"list", "list users and their accounts", userListCommand(), nil},
		{"add-to", "make a user a member of an account", userMembershipCommand(true), nil},
		{"remove-from", "end a user's membership of an account", userMembershipCommand(false), nil},
		{"set", "set the Unix account a user's tasks run as", userSetCommand(), nil},
	})
}

func usersTable(list []*longfairv1.User) table {
	t := table{header: []string{"USER", "ACCOUNTS", "CREATED", "LIMITS"}}
	for _, u := range list {
		t.add(u.GetName(), orDash(joinComma(u.GetAccounts())), fmtTime(u.GetCreatedAt()), describeLimits(u.GetLimits()))
	}
	return t
}

const userCreateHelp = `Usage: longfair user create NAME [flags]

Adds a user. A user submits jobs charged to an account it is a member of.

Example:
  longfair user create ann --account astro
  longfair user create bob --account bio,astro
`

func userCreateCommand() func(args []string, stdout, stderr io.Writer) error {
	var accounts ListFlag
	setup := func(fs *flag.FlagSet) {
		fs.Var(&accounts, "account", "make the user a member of this `account`; repeat or comma-separate")
	}
	return clientCommand("user create", userCreateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("user create", args, 1, 1, "NAME"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		u, err := c.Users().CreateUser(ctx, &longfairv1.CreateUserRequest{Name: args[0], Accounts: accounts})
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "created user %s, member of %s\n", u.GetName(), orDash(joinComma(u.GetAccounts())))
			return nil
		}
		return writeListing(out.stdout, f.output, usersTable([]*longfairv1.User{u}), u)
	})
}

const userListHelp = `Usage: longfair user list [flags]

Lists users and the accounts each may charge.

Example:
  longfair user list
  longfair user list --account astro
`

func userListCommand() func(args []string, stdout, stderr io.Writer) error {
	var account string
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only this `account`'s members")
	}
	return clientCommand("user list", userListHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("user list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var list []*longfairv1.User
		for u, err := range c.AllUsers(ctx, account) {
			if err != nil {
				return err
			}
			list = append(list, u)
		}
		return writeListing(out.stdout, f.output, usersTable(list), messages(list))
	})
}

func userMembershipCommand(add bool) func(args []string, stdout, stderr io.Writer) error {
	name, verb, help := "user add-to", "is now a member of", `Usage: longfair user add-to USER ACCOUNT [flags]

Makes a user a member of an account, so it may submit jobs charged to it.
Adding a member again changes nothing.

Example:
  longfair user add-to ann bio
`
	if !add {
		name, verb, help = "user remove-from", "is no longer a member of", `Usage: longfair user remove-from USER ACCOUNT [flags]

Ends a user's membership of an account: it can no longer submit jobs
charged to it (its jobs already submitted keep running).

Example:
  longfair user remove-from ann bio
`
	}
	return clientCommand(name, help, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs(name, args, 2, 2, "USER ACCOUNT"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		req := &longfairv1.MembershipRequest{User: args[0], Account: args[1]}
		var u *longfairv1.User
		var err error
		if add {
			u, err = c.Users().AddMembership(ctx, req)
		} else {
			u, err = c.Users().RemoveMembership(ctx, req)
		}
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "user %s %s %s (accounts: %s)\n", u.GetName(), verb, args[1], orDash(joinComma(u.GetAccounts())))
			return nil
		}
		return writeListing(out.stdout, f.output, usersTable([]*longfairv1.User{u}), u)
	})
}
