package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const fairnessHelp = `Usage: longfair fairness [flags]

Shows how fairly the cluster has been shared, per account (the sshare of
longfair): its weight and share of the cluster, its accumulated usage Ü
under the fairness window (resource-hours), its sharing degree β (below 1:
it got less than its own partition would have given it, so it goes first
under hmrf), what it holds now, its pending and running tasks, how long it
has waited, and its available service units.

Examples:
  longfair fairness
  longfair fairness --account astro --output json
  longfair fairness --watch 5s        # redraw when it changes
  longfair fairness --tree            # the account tree of hdrf and dff
`

func fairnessCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		account string
		watch   time.Duration
		tree    bool
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only this `account`")
		fs.BoolVar(&tree, "tree", false, "show the account tree of hdrf and dff instead (as 'longfair group tree')")
		fs.DurationVar(&watch, "watch", 0, "look again every `interval` and print the table when it changed (until Ctrl-C)")
	}
	return clientCommand("fairness", fairnessHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if len(args) > 0 {
			return Usagef("unexpected argument %q: to see one account use --account %s", args[0], args[0])
		}
		if tree {
			if account != "" || watch > 0 {
				return Usagef("--tree shows the whole tree: leave out --account and --watch")
			}
			return showAccountTree(ctx, c, f, out.stdout)
		}
		if watch > 0 {
			return watchFairness(ctx, c, f, account, watch, out.stdout)
		}
		cctx, cancel := f.callContext(ctx)
		defer cancel()
		r, err := c.Fairness().GetFairnessReport(cctx, &longfairv1.GetFairnessReportRequest{Account: account})
		if err != nil {
			return err
		}
		return printFairness(out.stdout, f.output, r)
	})
}

// watchFairness prints the report whenever its rows change.
func watchFairness(ctx context.Context, c *client.Client, f *clientFlags, account string, every time.Duration, w io.Writer) error {
	var last string
	for {
		cctx, cancel := f.callContext(ctx)
		r, err := c.Fairness().GetFairnessReport(cctx, &longfairv1.GetFairnessReportRequest{Account: account})
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if key := fairnessKey(r, f.output); key != last {
			last = key
			if f.output == "json" {
				if err := writeJSONLine(w, r); err != nil {
					return err
				}
			} else if err := printFairness(w, f.output, r); err != nil {
				return err
			}
			if f.output == "table" || f.output == "" {
				fmt.Fprintln(w)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// fairnessKey is what must change for a watch to print again: the table
// cells (without the clock), or the whole report for JSON.
func fairnessKey(r *longfairv1.FairnessReport, format string) string {
	if format == "json" {
		m := r.CloneVT()
		m.At = nil
		for _, a := range m.GetAccounts() {
			a.Waiting = nil
		}
		b, _ := longfairv1.AppendJSON(nil, m)
		return string(b)
	}
	t := fairnessTable(r)
	var b strings.Builder
	for _, row := range t.rows {
		b.WriteString(strings.Join(row[:len(row)-1], "\x1f"))
		b.WriteByte('\n')
	}
	return b.String()
}

func printFairness(w io.Writer, format string, r *longfairv1.FairnessReport) error {
	if format == "json" {
		return writeJSON(w, r)
	}
	if format == "table" || format == "" {
		fmt.Fprintf(w, "policy %s, window %s, capacity %s, at %s\n", r.GetPolicy(), r.GetWindow(), fmtVector(r.GetCapacity()), fmtTime(r.GetAt()))
		if len(r.GetAccounts()) == 0 {
			fmt.Fprintln(w, "no accounts yet: create one with 'longfair account create NAME'")
			return nil
		}
	}
	return writeTable(w, format, fairnessTable(r))
}

func fairnessTable(r *longfairv1.FairnessReport) table {
	t := table{header: []string{"ACCOUNT", "WEIGHT", "SHARE", "USAGE_Ü", "BETA", "ALLOCATION", "PENDING", "RUNNING", "SU_AVAILABLE", "WAITING"}}
	total := 0.0
	for _, a := range r.GetAccounts() {
		total += a.GetWeight()
	}
	for _, a := range r.GetAccounts() {
		share := "-"
		if total > 0 {
			share = fmtPercent(a.GetWeight() / total)
		}
		t.add(a.GetAccount(), client.FormatQuantity("", a.GetWeight()), share, fmtResourceHours(a.GetUsage()), fmtBeta(a),
			fmtVector(a.GetAllocation()), fmt.Sprint(a.GetPendingTasks()), fmt.Sprint(a.GetRunningTasks()),
			fmtSU(a.GetSuAvailableMicroSu()), fmtWaiting(a))
	}
	if r.GetPolicy() == "fawkes" {
		addPartitionColumn(&t, r)
	}
	return t
}

// fmtBeta writes β; "-" for an account that has had no baseline, so no
// sharing loss to make up.
func fmtBeta(a *longfairv1.AccountFairness) string {
	if !a.GetHasBeta() {
		return "-"
	}
	return fmt.Sprintf("%.3f", a.GetBeta())
}

func fmtWaiting(a *longfairv1.AccountFairness) string {
	if a.GetPendingTasks() == 0 || a.GetWaiting() == nil {
		return "-"
	}
	return fmtDur(a.GetWaiting().AsDuration())
}

const balanceHelp = `Usage: longfair balance [ACCOUNT] [flags]

Shows service-unit balances: granted, charged, held for pending and
running jobs, expired, and available for new jobs. Without an account,
every account's.

Example:
  longfair balance astro
  longfair balance --output csv
`

func balanceCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("balance", balanceHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("balance", args, 0, 1, "[ACCOUNT]"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var names []string
		if len(args) == 1 {
			names = args
		} else {
			for a, err := range c.AllAccounts(ctx) {
				if err != nil {
					return err
				}
				names = append(names, a.GetName())
			}
		}
		var list []*longfairv1.Balance
		for _, n := range names {
			b, err := c.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: n})
			if err != nil {
				return err
			}
			list = append(list, b)
		}
		t := table{header: []string{"ACCOUNT", "GRANTED_SU", "CHARGED_SU", "HELD_SU", "EXPIRED_SU", "AVAILABLE_SU"}}
		for _, b := range list {
			t.add(b.GetAccount(), fmtSU(b.GetGrantedMicroSu()), fmtSU(b.GetChargedMicroSu()), fmtSU(b.GetHeldMicroSu()),
				fmtSU(b.GetExpiredMicroSu()), fmtSU(b.GetAvailableMicroSu()))
		}
		if f.output == "json" && len(args) == 1 {
			return writeJSON(out.stdout, list[0])
		}
		return writeListing(out.stdout, f.output, t, messages(list))
	})
}

// WatchFairness prints every account's fairness as a table every interval
// until ctx ends: what 'longfair fairness --watch' shows, for the dev
// cluster's demo.
func WatchFairness(ctx context.Context, c *client.Client, every time.Duration, w io.Writer) error {
	f := &clientFlags{output: "table", timeout: 10 * time.Second}
	return watchFairness(ctx, c, f, "", every, w)
}
