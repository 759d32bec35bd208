package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const userSetHelp = `Usage: longfair user set NAME [--unix-user X] [--uid N] [--gid N] | --default

Sets the Unix account a user is: workers running as root start its tasks
as that account (its uid, gid and groups, as found on each node), and
servers that verify MUNGE credentials take that account's uid to be the
user. By default a user is the Unix account of the same name. Root is
never allowed (name root, uid 0, gid 0). Admins only.

Example:
  longfair user set ann --unix-user ann.smith
  longfair user set bob --uid 41002 --gid 41000
  longfair user set ann --default
`

func userSetCommand() func(args []string, stdout, stderr io.Writer) error {
	var unixUser, uid, gid string
	var reset bool
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&unixUser, "unix-user", "", "the Unix account `name`")
		fs.StringVar(&uid, "uid", "", "the Unix `uid` (fixed, whatever the nodes' account databases say)")
		fs.StringVar(&gid, "gid", "", "the primary Unix `gid`")
		fs.BoolVar(&reset, "default", false, "go back to the Unix account named like the user")
	}
	return clientCommand("user set", userSetHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("user set", args, 1, 1, "NAME"); err != nil {
			return err
		}
		id := &longfairv1.UnixIdentity{UnixUser: unixUser}
		for _, p := range []struct {
			flag, v string
			to      **uint32
		}{{"--uid", uid, &id.Uid}, {"--gid", gid, &id.Gid}} {
			if p.v == "" {
				continue
			}
			n, err := strconv.ParseUint(p.v, 10, 32)
			if err != nil {
				return Usagef("%s %q is not a number from 0 to 4294967295", p.flag, p.v)
			}
			v := uint32(n)
			*p.to = &v
		}
		req := &longfairv1.SetUserUnixRequest{User: args[0], Clear: reset}
		if unixUser != "" || id.Uid != nil || id.Gid != nil {
			req.Unix = id
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		u, err := c.Users().SetUserUnix(ctx, req)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "user %s is Unix account %s\n", u.GetName(), describeUnix(u.GetName(), u.GetUnix()))
			return nil
		}
		return writeListing(out.stdout, f.output, usersTable([]*longfairv1.User{u}), u)
	})
}

// describeUnix says which Unix account a user is, for people.
func describeUnix(user string, id *longfairv1.UnixIdentity) string {
	s := id.GetUnixUser()
	if s == "" && id.Uid == nil {
		s = user
	}
	if id.Uid != nil {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("uid %d", id.GetUid())
	}
	if id.Gid != nil {
		s += fmt.Sprintf(" gid %d", id.GetGid())
	}
	return s
}
