package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const nodesHelp = `Usage: longfair nodes [flags]

Lists the worker nodes, up and down, with their class, the account that
contributed them, each resource as used/total, and their running tasks.

Example:
  longfair nodes
  longfair nodes --output csv
`

func nodesCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("nodes", nodesHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("nodes", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Operator().ListNodes(ctx, &longfairv1.ListNodesRequest{})
		if err != nil {
			return err
		}
		if (f.output == "table" || f.output == "") && len(resp.GetNodes()) == 0 {
			fmt.Fprintln(out.stdout, "no worker node has joined yet (start 'longfair worker --join SERVER_GOSSIP_ADDR' on each compute node)")
			return nil
		}
		return writeListing(out.stdout, f.output, nodesTable(resp.GetNodes()), messages(resp.GetNodes()))
	})
}

// nodesTable has a used/total column per resource.
func nodesTable(nodes []*longfairv1.Node) table {
	var caps []map[string]float64
	for _, n := range nodes {
		caps = append(caps, n.GetCapacity())
	}
	res := resourceOrder(caps...)
	t := table{header: []string{"NODE", "UP", "CLASS", "ACCOUNT"}}
	for _, r := range res {
		t.header = append(t.header, strings.ToUpper(r)+"_USED/TOTAL")
	}
	t.header = append(t.header, "RUNNING", "CONFINEMENT", "ADDRESS", "SINCE")
	for _, n := range nodes {
		row := []string{n.GetId(), yesNo(n.GetUp()), orDash(n.GetClass()), orDash(n.GetAccount())}
		for _, r := range res {
			total := n.GetCapacity()[r]
			used := total - n.GetFree()[r]
			row = append(row, client.FormatQuantity(r, used)+"/"+client.FormatQuantity(r, total))
		}
		running := fmt.Sprint(n.GetRunningTasks())
		if q := n.GetQueuedTasks(); q > 0 {
			running += fmt.Sprintf(" +%d queued", q) // its look-ahead queue
		}
		row = append(row, running, orDash(n.GetConfinement()), orDash(n.GetAddress()), fmtTime(n.GetSince()))
		t.add(row...)
	}
	return t
}

// workersSummary is one line: how many nodes are up, and the cluster's
// used and total resources.
func workersSummary(nodes []*longfairv1.Node) string {
	up, running := 0, int64(0)
	used, total := map[string]float64{}, map[string]float64{}
	for _, n := range nodes {
		if !n.GetUp() {
			continue
		}
		up++
		running += n.GetRunningTasks()
		for r, v := range n.GetCapacity() {
			total[r] += v
			used[r] += v - n.GetFree()[r]
		}
	}
	var parts []string
	for _, r := range resourceOrder(total) {
		parts = append(parts, fmt.Sprintf("%s %s/%s", r, client.FormatQuantity(r, used[r]), client.FormatQuantity(r, total[r])))
	}
	return fmt.Sprintf("%d of %d up, %d task(s) running; used/total: %s", up, len(nodes), running, strings.Join(parts, ", "))
}
