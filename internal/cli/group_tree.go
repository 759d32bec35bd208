package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// showAccountTree prints the account tree: 'longfair group tree' and
// 'longfair fairness --tree'.
func showAccountTree(ctx context.Context, c *client.Client, f *clientFlags, w io.Writer) error {
	ctx, cancel := f.callContext(ctx)
	defer cancel()
	tree, err := c.Groups().GetAccountTree(ctx, &longfairv1.GetAccountTreeRequest{})
	if err != nil {
		return err
	}
	return printTree(w, f.output, tree)
}

func printTree(w io.Writer, format string, tree *longfairv1.AccountTree) error {
	if format == "json" {
		return writeJSON(w, tree)
	}
	if format == "table" || format == "" {
		note := ""
		if p := tree.GetPolicy(); p != "hdrf" && p != "dff" {
			note = " (the tree matters under hdrf and dff)"
		}
		fmt.Fprintf(w, "account tree under policy %s%s, at %s\n", tree.GetPolicy(), note, fmtTime(tree.GetAt()))
	}
	return writeTable(w, format, treeTable(tree, format == "csv"))
}

// treeTable lays the tree out one node per row, indented by depth in a
// table (CSV gives the path instead).
func treeTable(tree *longfairv1.AccountTree, csv bool) table {
	t := table{header: []string{"NODE", "KIND", "WEIGHT", "SHARE", "RUNNING", "FAIR_RESOURCE", "DFF_FAIRNESS", "HDRF_DOMINANT_SHARE"}}
	for _, n := range tree.GetNodes() {
		name := n.GetName()
		switch {
		case csv:
			name = n.GetPath()
		case n.GetDepth() == 0:
			name = "(cluster)"
		default:
			name = strings.Repeat("  ", int(n.GetDepth())-1) + name
		}
		kind := "group"
		switch {
		case n.GetDepth() == 0:
			kind = "root"
		case n.GetIsAccount():
			kind = "account"
		}
		t.add(name, kind, fmtNumber(n.GetWeight()), fmtPercent(n.GetShare()), fmtVector(n.GetRunning()), fmtVector(n.GetFairResource()),
			fmtRatio(n.GetFairness()), fmtRatio(n.GetDominantShare()))
	}
	return t
}

// fmtRatio writes a fairness ratio; "∞" for a node that holds a resource
// it has no fair share of.
func fmtRatio(x float64) string {
	if x >= math.MaxFloat64 {
		return "∞"
	}
	return fmt.Sprintf("%.3f", x)
}

// addPartitionColumn adds each account's FAWKES partition after the SHARE
// column of the fairness table (under fawkes, the share it may run in).
func addPartitionColumn(t *table, r *longfairv1.FairnessReport) {
	const at = 3
	t.header = append(t.header[:at:at], append([]string{"FAWKES_PARTITION"}, t.header[at:]...)...)
	for i, a := range r.GetAccounts() {
		row := t.rows[i]
		t.rows[i] = append(row[:at:at], append([]string{fmtPercent(a.GetFawkesShare())}, row[at:]...)...)
	}
}
