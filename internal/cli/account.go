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

func accountGroup() *cmdGroup {
	return group("account", "Manages accounts: the research groups or projects that are the unit of fairness and billing.", []subcommand{
		{"create", "add an account, optionally with a weight or a contribution", accountCreateCommand(), nil},
		{"list", "list accounts with their weights", accountListCommand(), nil},
		{"show", "show one account, its balance and its members", accountShowCommand(), nil},
		{"set-weight", "set or clear an account's weight or contribution", accountSetWeightCommand(), nil},
		{"set-group", "move an account into a group of the account tree (hdrf, dff)", accountSetGroupCommand(), nil},
	})
}

// optionalFloat is a float flag that remembers whether it was given.
type optionalFloat struct {
	v   float64
	set bool
}

func (o *optionalFloat) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	o.v, o.set = v, true
	return nil
}

func (o *optionalFloat) ptr() *float64 {
	if !o.set {
		return nil
	}
	v := o.v
	return &v
}

const accountCreateHelp = `Usage: longfair account create NAME [flags]

Adds an account. Its weight w_i (how much of the cluster it is entitled to)
is, in order of precedence: the --weight an admin sets; else its
--contribution K_i; else the share of the cluster its own worker nodes make
up.

Example:
  longfair account create astro --contribution 64
  longfair account create bio --weight 2
`

func accountCreateCommand() func(args []string, stdout, stderr io.Writer) error {
	var weight, contribution optionalFloat
	setup := func(fs *flag.FlagSet) {
		fs.Var(&weight, "weight", "the account's weight, overriding what it contributes")
		fs.Var(&contribution, "contribution", "the account's contribution K_i (e.g. the cores it paid for); its weight when no --weight is set")
	}
	return clientCommand("account create", accountCreateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("account create", args, 1, 1, "NAME"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		a, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: args[0], Weight: weight.ptr(), Contribution: contribution.ptr()})
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "created account %s (weight %s, %s)\n", a.GetName(), fmtNumber(a.GetWeight()), weightSource(a))
			return nil
		}
		return writeListing(out.stdout, f.output, accountsTable([]*longfairv1.Account{a}), a)
	})
}

func weightSource(a *longfairv1.Account) string {
	switch a.GetWeightSource() {
	case longfairv1.WeightSource_WEIGHT_SOURCE_ADMIN:
		return "set by an admin"
	case longfairv1.WeightSource_WEIGHT_SOURCE_CONTRIBUTION:
		return "its contribution"
	case longfairv1.WeightSource_WEIGHT_SOURCE_NODES:
		return "from its nodes"
	}
	return "default"
}

func accountsTable(list []*longfairv1.Account) table {
	t := table{header: []string{"ACCOUNT", "WEIGHT", "WEIGHT_FROM", "ADMIN_WEIGHT", "CONTRIBUTION", "CONTRIBUTED_NODES", "CREATED", "LIMITS"}}
	for _, a := range list {
		aw, k := "-", "-"
		if a.AdminWeight != nil {
			aw = fmtNumber(a.GetAdminWeight())
		}
		if a.Contribution != nil {
			k = fmtNumber(a.GetContribution())
		}
		t.add(a.GetName(), fmtNumber(a.GetWeight()), weightSource(a), aw, k, fmtVector(a.GetContributed()), fmtTime(a.GetCreatedAt()), describeLimits(a.GetLimits()))
	}
	return t
}

const accountListHelp = `Usage: longfair account list [flags]

Lists every account with its weight and where the weight comes from.

Example:
  longfair account list
  longfair account list --output json
`

func accountListCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("account list", accountListHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("account list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var list []*longfairv1.Account
		for a, err := range c.AllAccounts(ctx) {
			if err != nil {
				return err
			}
			list = append(list, a)
		}
		return writeListing(out.stdout, f.output, accountsTable(list), messages(list))
	})
}

const accountShowHelp = `Usage: longfair account show NAME [flags]

Shows one account: its weight, its service-unit balance, its grants and its
members.

Example:
  longfair account show astro
`

func accountShowCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("account show", accountShowHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("account show", args, 1, 1, "NAME"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		a, err := c.Accounts().GetAccount(ctx, &longfairv1.GetAccountRequest{Name: args[0]})
		if err != nil {
			return err
		}
		b, err := c.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: args[0]})
		if err != nil {
			return err
		}
		var users []*longfairv1.User
		for u, err := range c.AllUsers(ctx, args[0]) {
			if err != nil {
				return err
			}
			users = append(users, u)
		}
		var grants []*longfairv1.Grant
		for g, err := range c.AllGrants(ctx, args[0]) {
			if err != nil {
				return err
			}
			grants = append(grants, g)
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, jsonObject{{"account", a}, {"balance", b}, {"members", messages(users)}, {"grants", messages(grants)}})
		case "csv":
			return writeTable(out.stdout, "csv", accountsTable([]*longfairv1.Account{a}))
		}
		fmt.Fprintf(out.stdout, "account %s: weight %s (%s), created %s\n", a.GetName(), fmtNumber(a.GetWeight()), weightSource(a), fmtTime(a.GetCreatedAt()))
		if len(a.GetContributed()) > 0 {
			fmt.Fprintf(out.stdout, "  contributed nodes: %s\n", fmtVector(a.GetContributed()))
		}
		fmt.Fprintf(out.stdout, "  SU: %s granted, %s charged, %s held, %s expired, %s available\n", fmtSU(b.GetGrantedMicroSu()),
			fmtSU(b.GetChargedMicroSu()), fmtSU(b.GetHeldMicroSu()), fmtSU(b.GetExpiredMicroSu()), fmtSU(b.GetAvailableMicroSu()))
		var names []string
		for _, u := range users {
			names = append(names, u.GetName())
		}
		fmt.Fprintf(out.stdout, "  members (%d): %s\n", len(users), orDash(joinComma(names)))
		if len(grants) > 0 {
			fmt.Fprintln(out.stdout)
			return writeTable(out.stdout, "table", grantsTable(grants))
		}
		return nil
	})
}

const accountSetWeightHelp = `Usage: longfair account set-weight NAME [WEIGHT] [flags]

Sets an account's weight (overriding what it contributes), or its
contribution K_i, or clears either so the weight is derived again.

Examples:
  longfair account set-weight astro 3
  longfair account set-weight astro --contribution 128
  longfair account set-weight astro --clear     # back to the contribution-derived weight
`

func accountSetWeightCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		contribution                 optionalFloat
		clearWeight, clearContribute bool
	)
	setup := func(fs *flag.FlagSet) {
		fs.Var(&contribution, "contribution", "set the account's contribution K_i")
		fs.BoolVar(&clearWeight, "clear", false, "remove the admin weight: the weight is derived from the contribution again")
		fs.BoolVar(&clearContribute, "clear-contribution", false, "remove the admin-set contribution: the weight comes from the account's nodes")
	}
	return clientCommand("account set-weight", accountSetWeightHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("account set-weight", args, 1, 2, "NAME [WEIGHT]"); err != nil {
			return err
		}
		req := &longfairv1.UpdateAccountRequest{Name: args[0], Contribution: contribution.ptr(), ClearWeight: clearWeight, ClearContribution: clearContribute}
		if len(args) == 2 {
			if clearWeight {
				return Usagef("both a weight and --clear: give one")
			}
			w, err := strconv.ParseFloat(args[1], 64)
			if err != nil {
				return Usagef("weight %q is not a number", args[1])
			}
			req.Weight = &w
		}
		if req.Weight == nil && req.Contribution == nil && !clearWeight && !clearContribute {
			return Usagef("nothing to change: give a WEIGHT, --contribution, --clear or --clear-contribution")
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		a, err := c.Accounts().UpdateAccount(ctx, req)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "account %s: weight %s (%s)\n", a.GetName(), fmtNumber(a.GetWeight()), weightSource(a))
			return nil
		}
		return writeListing(out.stdout, f.output, accountsTable([]*longfairv1.Account{a}), a)
	})
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
