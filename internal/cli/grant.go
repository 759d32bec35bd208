package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func grantGroup() *cmdGroup {
	return group("grant", "Credits service units (SU) to accounts and lists the grants.", []subcommand{
		{"add", "credit SUs to an account", grantAddCommand(), nil},
		{"list", "list grants", grantListCommand(), nil},
	})
}

func grantsTable(list []*longfairv1.Grant) table {
	t := table{header: []string{"GRANT", "ACCOUNT", "AMOUNT_SU", "GRANTED", "EXPIRES", "NOTE"}}
	for _, g := range list {
		t.add(g.GetId(), g.GetAccount(), fmtSU(g.GetAmountMicroSu()), fmtTime(g.GetGrantedAt()), fmtTime(g.GetExpiresAt()), orDash(g.GetNote()))
	}
	return t
}

const grantAddHelp = `Usage: longfair grant add ACCOUNT AMOUNT_SU [flags]

Credits service units to an account. AMOUNT_SU is a decimal number of SU
(up to six decimals). With --id the grant is idempotent: running the same
command again credits nothing more. After --expires, the unused rest no
longer covers new jobs.

Examples:
  longfair grant add astro 100000 --note "2026 allocation" --expires 2026-12-31
  longfair grant add bio 5000 --id bio-topup-7 --expires 90d
`

func grantAddCommand() func(args []string, stdout, stderr io.Writer) error {
	var id, note, expires string
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&id, "id", "", "grant `id` that makes the grant idempotent (default: a random one)")
		fs.StringVar(&note, "note", "", "free `text` for people")
		fs.StringVar(&expires, "expires", "", "when the grant expires: a `time` (2026-12-31, RFC 3339) or a duration from now (90d, 720h)")
	}
	return clientCommand("grant add", grantAddHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("grant add", args, 2, 2, "ACCOUNT AMOUNT_SU"); err != nil {
			return err
		}
		amount, err := client.ParseSU(args[1])
		if err != nil {
			return Usagef("%v", err)
		}
		req := &longfairv1.CreateGrantRequest{Id: id, Account: args[0], AmountMicroSu: amount, Note: note}
		if expires != "" {
			t, err := parseTimeOrAfter(expires, time.Now())
			if err != nil {
				return Usagef("--expires: %v", err)
			}
			req.ExpiresAt = timestamppb.New(t)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		g, err := c.Grants().CreateGrant(ctx, req)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			exp := ""
			if g.GetExpiresAt() != nil {
				exp = ", expires " + fmtTime(g.GetExpiresAt())
			}
			fmt.Fprintf(out.stdout, "granted %s SU to %s (grant %s%s)\n", fmtSU(g.GetAmountMicroSu()), g.GetAccount(), g.GetId(), exp)
			return nil
		}
		return writeListing(out.stdout, f.output, grantsTable([]*longfairv1.Grant{g}), g)
	})
}

const grantListHelp = `Usage: longfair grant list [flags]

Lists grants by id, optionally of one account.

Example:
  longfair grant list --account astro
`

func grantListCommand() func(args []string, stdout, stderr io.Writer) error {
	var account string
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only this `account`'s grants")
	}
	return clientCommand("grant list", grantListHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("grant list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var list []*longfairv1.Grant
		for g, err := range c.AllGrants(ctx, account) {
			if err != nil {
				return err
			}
			list = append(list, g)
		}
		return writeListing(out.stdout, f.output, grantsTable(list), messages(list))
	})
}

// parseTimeOrAfter reads an absolute time (RFC 3339, "2006-01-02 15:04",
// "2006-01-02") or a duration after now ("90d", "36h", "1h30m").
func parseTimeOrAfter(s string, now time.Time) (time.Time, error) {
	if d, ok := parseDays(s); ok {
		return now.Add(d), nil
	}
	return parseTime(s, now)
}

// parseTime reads "now", "now-24h" or "-7d" (relative to now), RFC 3339,
// "2006-01-02T15:04", "2006-01-02 15:04" or "2006-01-02" (local time).
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "now" {
		return now, nil
	}
	if rest, ok := strings.CutPrefix(s, "now"); ok {
		s = rest
	}
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		if d, ok := parseDays(s[1:]); ok {
			if s[0] == '-' {
				d = -d
			}
			return now.Add(d), nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use 2026-12-31, 2026-12-31 18:00, RFC 3339, now, or now-24h / -7d", s)
}

// parseDays reads a Go duration that may also count days ("7d", "1d12h").
func parseDays(s string) (time.Duration, bool) {
	days := time.Duration(0)
	if i := strings.Index(s, "d"); i > 0 {
		var n int
		if _, err := fmt.Sscanf(s[:i], "%d", &n); err != nil || fmt.Sprint(n) != s[:i] || n < 0 {
			return 0, false
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, true
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return days + d, true
}
