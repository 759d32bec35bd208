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

func queueGroup() *cmdGroup {
	return group("queue", "Declares latency queues for the bpf and sp policies: accounts with periodic bursts that want each burst done quickly. BPF's admission control gives each a class (hard, soft or elastic) or rejects it, with the reason.", []subcommand{
		{"create", "declare an account's latency queue (period, burst, deadline)", queueCreateCommand(), nil},
		{"list", "list latency queues with their class and current burst", queueListCommand(), nil},
		{"remove", "make an account a throughput queue again", queueRemoveCommand(), nil},
	})
}

const queueCreateHelp = `Usage: longfair queue create ACCOUNT --period P --deadline D --burst RESOURCES [flags]

Declares that ACCOUNT is a latency queue (BPF): a burst of work arrives
every period (the first at --start, default now), holds up to --burst while
it runs, and should be done within --deadline. BPF's admission control
judges it against the cluster's capacity and the accounts' weights now:

  hard     the burst is guaranteed and served first
  soft     served when hard queues leave room, shortest remaining first
  elastic  the burst is larger than the account's fair share of a period:
           it gets its long-term fair share only
  rejected the cluster cannot take another queue without breaking an
           earlier guarantee (exit code 1, with the reason)

Every other account is a throughput queue. Only the bpf and sp policies
use latency queues.

Examples:
  longfair queue create astro --period 10m --deadline 2m --burst cpu=64,mem=128G
  longfair queue create bio --period 1h --deadline 5m --burst cpu=8 --start 2026-12-01T08:00:00Z
`

func queueCreateCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		period, deadline optionalDuration
		burst            ListFlag
		start            string
	)
	setup := func(fs *flag.FlagSet) {
		fs.Var(&period, "period", "time between bursts (`duration`, e.g. 10m)")
		fs.Var(&deadline, "deadline", "how soon a burst should be done (`duration`, at most the period)")
		fs.Var(&burst, "burst", "what a burst holds while it runs, `name=quantity` (cpu=64,mem=128G); repeat or comma-separate")
		fs.StringVar(&start, "start", "", "when the first burst arrives (`time`: RFC 3339, 2026-12-31 18:00, now+1h; default now)")
	}
	return clientCommand("queue create", queueCreateHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("queue create", args, 1, 1, "ACCOUNT"); err != nil {
			return err
		}
		if !period.set || !deadline.set || len(burst) == 0 {
			return Usagef("give --period, --deadline and --burst (see --help)")
		}
		b, err := client.ParseResources(burst...)
		if err != nil {
			return Usagef("--burst: %v", err)
		}
		spec := client.LatencyQueueSpec{Account: args[0], Period: period.v, Deadline: deadline.v, Burst: b}
		if start != "" {
			if spec.Start, err = parseTime(start, time.Now()); err != nil {
				return Usagef("--start: %v", err)
			}
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		q, err := c.CreateLatencyQueue(ctx, spec)
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			class := queueClass(q.GetClass())
			fmt.Fprintf(out.stdout, "latency queue of %s admitted as %s: %s\n", q.GetAccount(), class, strings.TrimPrefix(q.GetReason(), class+": "))
			return nil
		}
		return writeListing(out.stdout, f.output, queuesTable([]*longfairv1.LatencyQueue{q}), q)
	})
}

// queueClass names a class as admission control does.
func queueClass(c longfairv1.QueueClass) string {
	return strings.ToLower(strings.TrimPrefix(c.String(), "QUEUE_CLASS_"))
}

func queuesTable(list []*longfairv1.LatencyQueue) table {
	t := table{header: []string{"ACCOUNT", "CLASS", "PERIOD", "DEADLINE", "BURST", "BURST_STARTED", "BURST_USED", "REASON"}}
	for _, q := range list {
		t.add(q.GetAccount(), queueClass(q.GetClass()), fmtDuration(q.GetPeriod()), fmtDuration(q.GetDeadline()), fmtVector(q.GetBurst()),
			fmtTime(q.GetBurstStart()), fmtResourceHours(q.GetUsed()), q.GetReason())
	}
	return t
}

const queueListHelp = `Usage: longfair queue list [flags]

Lists the latency queues: each one's class and admission control's reason
for it, its period, deadline and burst, and what the burst under way has
been given so far (demand × walltime of the tasks started since it began,
in resource-hours).

Example:
  longfair queue list
  longfair queue list --output json
`

func queueListCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("queue list", queueListHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("queue list", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Queues().ListLatencyQueues(ctx, &longfairv1.ListLatencyQueuesRequest{})
		if err != nil {
			return err
		}
		if len(resp.GetQueues()) == 0 && (f.output == "table" || f.output == "") {
			fmt.Fprintln(out.stdout, "no latency queues: every account is a throughput queue; declare one with 'longfair queue create'")
			return nil
		}
		return writeListing(out.stdout, f.output, queuesTable(resp.GetQueues()), messages(resp.GetQueues()))
	})
}

const queueRemoveHelp = `Usage: longfair queue remove ACCOUNT [flags]

Removes an account's latency queue: it is a throughput queue again. To have
admission control judge a queue anew (after the cluster or the weights
changed), remove it and create it again.

Example:
  longfair queue remove astro
`

func queueRemoveCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("queue remove", queueRemoveHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("queue remove", args, 1, 1, "ACCOUNT"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		q, err := c.Queues().RemoveLatencyQueue(ctx, &longfairv1.RemoveLatencyQueueRequest{Account: args[0]})
		if err != nil {
			return err
		}
		if f.output == "table" || f.output == "" {
			fmt.Fprintf(out.stdout, "%s is a throughput queue again\n", q.GetAccount())
			return nil
		}
		return writeListing(out.stdout, f.output, queuesTable([]*longfairv1.LatencyQueue{q}), q)
	})
}
