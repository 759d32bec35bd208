package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/longfair/longfair/client"
)

func aclGroup() func(args []string, stdout, stderr io.Writer) error {
	tokens := group("acl token", "Creates, lists and revokes API tokens.", []subcommand{
		{"create", "create a token for a user or an admin", aclTokenCreateCommand()},
		{"list", "list tokens (never their secrets)", aclTokenListCommand()},
		{"revoke", "revoke a token", aclTokenRevokeCommand()},
	})
	return group("acl", "Manages who may call the cluster: API tokens.", []subcommand{
		{"token", "create, list and revoke tokens", tokens},
	})
}

// errNoACL is what the token commands answer while the servers have no
// ACL service: nothing to call, and nothing is enforced.
var errNoACL = errors.New("this cluster does not support tokens yet: its servers offer no ACL service and accept every call; " +
	"the token in LONGFAIR_TOKEN is sent but not checked")

const aclTokenCreateHelp = `Usage: longfair acl token create [flags]

Creates an API token. Its secret is printed once; give it to its holder,
who sets it in LONGFAIR_TOKEN.

Example:
  longfair acl token create --role user --user ann --expires 90d
  longfair acl token create --role admin --description "ops on-call"
`

func aclTokenCreateCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		role, user, description string
		expires                 optionalDuration
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&role, "role", "user", "`role`: user (submit and read its own accounts) or admin (everything)")
		fs.StringVar(&user, "user", "", "the `user` a user token acts as")
		fs.StringVar(&description, "description", "", "free `text` saying what the token is for")
		fs.Var(&expires, "expires", "the token stops working after this `duration` (e.g. 90d)")
	}
	return clientCommand("acl token create", aclTokenCreateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token create", args, 0, 0, ""); err != nil {
			return err
		}
		if role != "user" && role != "admin" {
			return usagef("--role %q: use user or admin", role)
		}
		if role == "user" && user == "" {
			return usagef("a user token needs --user: the user it acts as")
		}
		if expires.set && expires.v <= 0*time.Second {
			return usagef("--expires %v: give a positive duration", expires.v)
		}
		return errNoACL
	})
}

const aclTokenListHelp = `Usage: longfair acl token list [flags]

Lists tokens: id, role, user, description, expiry. Secrets are never shown.

Example:
  longfair acl token list
`

func aclTokenListCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl token list", aclTokenListHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token list", args, 0, 0, ""); err != nil {
			return err
		}
		return errNoACL
	})
}

const aclTokenRevokeHelp = `Usage: longfair acl token revoke TOKEN_ID [flags]

Revokes a token: calls with it are refused from then on.

Example:
  longfair acl token revoke 3f2a9c
`

func aclTokenRevokeCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl token revoke", aclTokenRevokeHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token revoke", args, 1, 1, "TOKEN_ID"); err != nil {
			return err
		}
		return errNoACL
	})
}
