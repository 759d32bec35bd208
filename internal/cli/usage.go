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

func usageGroup() *cmdGroup {
	return group("usage", "Reports resource usage and SU charges over a time range.", []subcommand{
		{"report", "sum usage and charges by account or by user", usageReportCommand(), nil},
	})
}

const usageReportHelp = `Usage: longfair usage report [flags]

Sums, over [--from, --to), the resource usage of task attempts (clipped to
the range, in resource-hours), their runtime, and the SU charged for the
attempts that ended in the range, by account or by user.

Requested vs used, as seff shows it, over the attempts that ended in the
range and that a confined worker measured (MEASURED says how many of the
ended ones; an unconfined node measures nothing and is left out rather
than counted as idle): the CPU seconds used and allocated (cpu × runtime,
whole attempts, on the node that measured them: a parallel task's head),
their ratio, and the largest peak memory with that attempt's request.
Each sum reconciles with the charge lines of 'longfair ledger export'.

Times are 2026-03-01, 2026-03-01 18:00, RFC 3339, now, or relative to now
such as -7d or now-24h.

--per day, week or month reports each calendar period of the range on its
own rows (a PERIOD column first), for a PI's report of a grant's burn: days
and weeks (from Monday) begin at local midnight, months on their 1st. An
attempt counts in every period it ran in, its charge in the one it ended in.

Examples:
  longfair usage report --from 2026-03-01 --to 2026-04-01
  longfair usage report --from -7d --by user --account astro --output csv
  longfair usage report --from 2026-01-01 --to 2026-07-01 --per month --account astro
`

func usageReportCommand() func(args []string, stdout, stderr io.Writer) error {
	var from, to, by, account, per string
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&per, "per", "", "one set of rows per calendar `period`: day, week or month")
		fs.StringVar(&from, "from", "-30d", "start of the range (`time`, included)")
		fs.StringVar(&to, "to", "now", "end of the range (`time`, excluded)")
		fs.StringVar(&by, "by", "account", "group by `account` or user")
		fs.StringVar(&account, "account", "", "only this `account`'s usage")
	}
	return clientCommand("usage report", usageReportHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("usage report", args, 0, 0, ""); err != nil {
			return err
		}
		now := time.Now()
		t0, err := parseTime(from, now)
		if err != nil {
			return Usagef("--from: %v", err)
		}
		t1, err := parseTime(to, now)
		if err != nil {
			return Usagef("--to: %v", err)
		}
		if !t0.Before(t1) {
			return Usagef("--from %s is not before --to %s: give a non-empty range", t0.Format(time.RFC3339), t1.Format(time.RFC3339))
		}
		req := &longfairv1.UsageReportRequest{From: timestamppb.New(t0), To: timestamppb.New(t1), Account: account}
		cuts, err := periodCuts(per, t0, t1)
		if err != nil {
			return err
		}
		for _, c := range cuts {
			req.SplitAt = append(req.SplitAt, timestamppb.New(c))
		}
		switch by {
		case "account":
			req.GroupBy = longfairv1.UsageGroupBy_USAGE_GROUP_BY_ACCOUNT
		case "user":
			req.GroupBy = longfairv1.UsageGroupBy_USAGE_GROUP_BY_USER
		default:
			return Usagef("--by %q: use account or user", by)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Ledger().UsageReport(ctx, req)
		if err != nil {
			return err
		}
		t := usageTable(by, resp.GetRows(), per != "")
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "usage from %s to %s by %s%s\n", t0.Local().Format("2006-01-02 15:04"), t1.Local().Format("2006-01-02 15:04"), by, map[bool]string{true: " per " + per}[per != ""])
			if len(resp.GetRows()) == 0 {
				fmt.Fprintln(out.stdout, "no task ran in this range")
				return nil
			}
		}
		if f.output == "json" {
			return writeJSON(out.stdout, jsonObject{{"from", t0.UTC().Format(time.RFC3339Nano)}, {"to", t1.UTC().Format(time.RFC3339Nano)}, {"by", by}, {"per", per}, {"rows", messages(resp.GetRows())}})
		}
		return writeTable(out.stdout, f.output, t)
	})
}

// periodCuts are the calendar boundaries strictly inside (t0, t1) for
// --per, in local time: midnights, Monday midnights or firsts of months.
func periodCuts(per string, t0, t1 time.Time) ([]time.Time, error) {
	var next func(time.Time) time.Time
	switch per {
	case "":
		return nil, nil
	case "day":
		next = func(t time.Time) time.Time {
			return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
		}
	case "week":
		next = func(t time.Time) time.Time {
			days := (8 - int(t.Weekday())) % 7
			if days == 0 {
				days = 7
			}
			return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, t.Location())
		}
	case "month":
		next = func(t time.Time) time.Time { return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, t.Location()) }
	default:
		return nil, Usagef("--per %q: use day, week or month", per)
	}
	var cuts []time.Time
	for c := next(t0.Local()); c.Before(t1); c = next(c) {
		if len(cuts) == longfairv1.MaxUsagePeriods-1 {
			return nil, Usagef("--per %s cuts %s..%s into more than %d periods: give a shorter range or a longer period", per, t0.Format(time.DateOnly), t1.Format(time.DateOnly), longfairv1.MaxUsagePeriods)
		}
		cuts = append(cuts, c)
	}
	return cuts, nil
}

// usageTable lays out the report's rows, grouped by by, with each row's
// period first when the report has periods.
func usageTable(by string, rows []*longfairv1.UsageRow, periods bool) table {
	var usages []map[string]float64
	for _, r := range rows {
		usages = append(usages, r.GetUsage())
	}
	res := resourceOrder(usages...)
	t := table{header: []string{strings.ToUpper(by), "TASKS", "RUNTIME"}}
	if periods {
		t.header = append([]string{"PERIOD"}, t.header...)
	}
	for _, r := range res {
		t.header = append(t.header, strings.ToUpper(r)+"_HOURS")
	}
	t.header = append(t.header, "CHARGED_SU", "MEASURED", "CPU_USED_SECONDS", "CPU_ALLOC_SECONDS", "CPU_EFF", "MEM_PEAK", "MEM_REQUESTED")
	for _, r := range rows {
		row := []string{r.GetKey(), fmt.Sprint(r.GetTasks()), fmtDuration(r.GetRuntime())}
		if periods {
			row = append([]string{r.GetPeriodStart().AsTime().Local().Format("2006-01-02")}, row...)
		}
		for _, k := range res {
			row = append(row, client.FormatQuantity(k, r.GetUsage()[k]/3600))
		}
		row = append(row, fmtSU(r.GetChargedMicroSu()))
		row = append(row, measuredColumns(r)...)
		t.add(row...)
	}
	return t
}

// measuredColumns are a usage row's requested vs used cells: how many of
// the ended attempts were measured, then "-" for what none measured.
func measuredColumns(r *longfairv1.UsageRow) []string {
	cells := []string{fmt.Sprintf("%d/%d", r.GetMeasuredTasks(), r.GetEndedTasks()), "-", "-", "-", "-", "-"}
	if r.GetMeasuredTasks() == 0 {
		return cells
	}
	cells[1] = fmt.Sprintf("%.2f", r.GetCpuUsedSeconds())
	cells[2] = fmt.Sprintf("%.2f", r.GetCpuAllocatedSeconds())
	if alloc := r.GetCpuAllocatedSeconds(); alloc > 0 {
		cells[3] = fmt.Sprintf("%.1f%%", 100*r.GetCpuUsedSeconds()/alloc)
	}
	if p := r.GetPeakMemBytes(); p > 0 {
		cells[4] = client.FormatQuantity("mem", float64(p))
	}
	if q := r.GetPeakMemRequestedBytes(); q > 0 {
		cells[5] = client.FormatQuantity("mem", float64(q))
	}
	return cells
}
