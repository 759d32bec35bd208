package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func aclGroup() *cmdGroup {
	tokens := group("acl token", "Creates, lists and revokes API tokens.", []subcommand{
		{"create", "create a token for a user, an admin or a worker", aclTokenCreateCommand(), nil},
		{"list", "list tokens (never their secrets)", aclTokenListCommand(), nil},
		{"revoke", "revoke a token", aclTokenRevokeCommand(), nil},
	})
	return group("acl", "Manages who may call the cluster: API tokens.", []subcommand{
		{"bootstrap", "create the cluster's first admin token", aclBootstrapCommand(), nil},
		{"whoami", "show the token the CLI calls with", aclWhoAmICommand(), nil},
		{name: "token", summary: "create, list and revoke tokens", group: tokens},
	})
}

// aclError explains the answers of a cluster without the ACL service.
func aclError(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("this cluster does not support tokens: its servers offer no ACL service (they accept every call, and the token in %s is not checked)", client.EnvToken)
	}
	return err
}

func roleName(r longfairv1.TokenRole) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "TOKEN_ROLE_"))
}

func tokensTable(list []*longfairv1.Token) table {
	t := table{header: []string{"TOKEN", "ROLE", "USER", "NODE", "DESCRIPTION", "CREATED", "EXPIRES", "REVOKED"}}
	for _, k := range list {
		role := roleName(k.GetRole())
		if k.GetBootstrap() {
			role += " (bootstrap)"
		}
		t.add(k.GetId(), role, orDash(k.GetUser()), nodeOrAny(k), orDash(k.GetDescription()), fmtTime(k.GetCreatedAt()), fmtTime(k.GetExpiresAt()), fmtTime(k.GetRevokedAt()))
	}
	return t
}

// nodeOrAny is the NODE column: the node a worker token is bound to,
// "any" for an unbound worker token, "-" for the other roles.
func nodeOrAny(k *longfairv1.Token) string {
	switch {
	case k.GetNode() != "":
		return k.GetNode()
	case k.GetRole() == longfairv1.TokenRole_TOKEN_ROLE_WORKER:
		return "any"
	}
	return "-"
}

// printCreated shows a new token and its secret, which is shown only once.
func printCreated(out cmdIO, format string, c *longfairv1.CreatedToken) error {
	switch format {
	case "json":
		return writeJSON(out.stdout, c)
	case "csv":
		t := tokensTable([]*longfairv1.Token{c.GetToken()})
		t.header = append(t.header, "SECRET")
		t.rows[0] = append(t.rows[0], c.GetSecret())
		return writeTable(out.stdout, "csv", t)
	}
	k := c.GetToken()
	fmt.Fprintf(out.stdout, "created %s token %s", roleName(k.GetRole()), k.GetId())
	if k.GetUser() != "" {
		fmt.Fprintf(out.stdout, " for %s", k.GetUser())
	}
	if k.GetNode() != "" {
		fmt.Fprintf(out.stdout, " bound to node %s", k.GetNode())
	}
	if k.GetExpiresAt() != nil {
		fmt.Fprintf(out.stdout, ", expires %s", fmtTime(k.GetExpiresAt()))
	}
	fmt.Fprintf(out.stdout, "\nsecret (shown only now; the holder sets it in %s):\n%s\n", client.EnvToken, c.GetSecret())
	return nil
}

const aclBootstrapHelp = `Usage: longfair acl bootstrap [flags]

Creates the cluster's first admin token and prints its secret. It needs no
token and works once in the life of the cluster; afterwards use an admin
token to create more. (Servers started with --acl-bootstrap-token FILE
bootstrap from that file instead.)

Example:
  longfair acl bootstrap --addr 10.0.0.1:7410
`

func aclBootstrapCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl bootstrap", aclBootstrapHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl bootstrap", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		created, err := c.ACL().Bootstrap(ctx, &longfairv1.BootstrapACLRequest{})
		if err != nil {
			return aclError(err)
		}
		return printCreated(out, f.output, created)
	})
}

const aclWhoAmIHelp = `Usage: longfair acl whoami [flags]

Shows the token the CLI calls with (from --token or LONGFAIR_TOKEN): its
id, role and user.

Example:
  longfair acl whoami
`

func aclWhoAmICommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl whoami", aclWhoAmIHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl whoami", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		k, err := c.ACL().WhoAmI(ctx, &longfairv1.WhoAmIRequest{})
		if err != nil {
			return aclError(err)
		}
		return writeListing(out.stdout, f.output, tokensTable([]*longfairv1.Token{k}), k)
	})
}

const aclTokenCreateHelp = `Usage: longfair acl token create [flags]

Creates an API token. Its secret is printed once; give it to its holder,
who sets it in LONGFAIR_TOKEN. A user token acts as one user: it sees and
charges only that user's accounts. A worker token may only run a worker.

Bind each worker token to its node with --node (the worker's --node-id):
the token then connects only as that node, so a token leaked from one node
cannot take another node's tasks, report their exits or mark it down. An
unbound worker token (no --node) works for any node; create one bound
token per node instead.

Examples:
  longfair acl token create --role user --user ann --expires 90d
  longfair acl token create --role admin --description "ops on-call"
  longfair acl token create --role worker --node c01 --description "rack 12"
`

func aclTokenCreateCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		role, user, node, description string
		expires                       optionalDuration
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&role, "role", "user", "`role`: user, admin or worker")
		fs.StringVar(&user, "user", "", "the `user` a user token acts as (for other roles: who holds it)")
		fs.StringVar(&node, "node", "", "bind a worker token to this `node-id`: it may then connect only as that node (recommended: one bound token per node)")
		fs.StringVar(&description, "description", "", "free `text` saying what the token is for")
		fs.Var(&expires, "expires", "the token stops working after this `duration` (e.g. 90d)")
	}
	return clientCommand("acl token create", aclTokenCreateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token create", args, 0, 0, ""); err != nil {
			return err
		}
		req := &longfairv1.CreateTokenRequest{User: user, Node: node, Description: description}
		switch role {
		case "user":
			req.Role = longfairv1.TokenRole_TOKEN_ROLE_USER
			if user == "" {
				return Usagef("a user token needs --user: the user it acts as")
			}
		case "admin":
			req.Role = longfairv1.TokenRole_TOKEN_ROLE_ADMIN
		case "worker":
			req.Role = longfairv1.TokenRole_TOKEN_ROLE_WORKER
		default:
			return Usagef("--role %q: use user, admin or worker", role)
		}
		if node != "" && req.Role != longfairv1.TokenRole_TOKEN_ROLE_WORKER {
			return Usagef("--node binds a worker token to its node: give --role worker, or leave --node out for a %s token", role)
		}
		if expires.set {
			if expires.v < time.Second {
				return Usagef("--expires %v: give at least one second", expires.v)
			}
			req.Ttl = durationpb.New(expires.v)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		created, err := c.ACL().CreateToken(ctx, req)
		if err != nil {
			return aclError(err)
		}
		return printCreated(out, f.output, created)
	})
}

const aclTokenListHelp = `Usage: longfair acl token list [flags]

Lists tokens: id, role, user, the node a worker token is bound to ("any"
for an unbound one), description, expiry, revocation. Secrets are never
shown.

Example:
  longfair acl token list
`

func aclTokenListCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl token list", aclTokenListHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var list []*longfairv1.Token
		token := ""
		for {
			resp, err := c.ACL().ListTokens(ctx, &longfairv1.ListTokensRequest{PageSize: longfairv1.MaxPageSize, PageToken: token})
			if err != nil {
				return aclError(err)
			}
			list = append(list, resp.GetTokens()...)
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
		return writeListing(out.stdout, f.output, tokensTable(list), messages(list))
	})
}

const aclTokenRevokeHelp = `Usage: longfair acl token revoke TOKEN_ID [flags]

Revokes a token: calls with it are refused from then on. Revoking a revoked
token changes nothing; the last usable admin token cannot be revoked.

Example:
  longfair acl token revoke 3f2a9c
`

func aclTokenRevokeCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("acl token revoke", aclTokenRevokeHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("acl token revoke", args, 1, 1, "TOKEN_ID"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		k, err := c.ACL().RevokeToken(ctx, &longfairv1.RevokeTokenRequest{Id: args[0]})
		if err != nil {
			return aclError(err)
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "revoked %s token %s (revoked at %s)\n", roleName(k.GetRole()), k.GetId(), fmtTime(k.GetRevokedAt()))
			return nil
		}
		return writeListing(out.stdout, f.output, tokensTable([]*longfairv1.Token{k}), k)
	})
}
