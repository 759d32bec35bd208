package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longfair/longfair/sched"
)

// WriteTable writes a readable comparison of the results of one workload
// under one or more policies: the workload, then per policy the makespan
// and utilization, then per account β, usage against contribution, and job
// times (with the speedup over static when static was run). Slotted input
// gets the paper's per-slot table instead of job times.
func WriteTable(w io.Writer, wl *Workload, results []*Result) error {
	ew := &ErrWriter{w: w}
	writeWorkloadHeader(ew, wl, results)
	if len(results) > 0 && results[0].Slots != nil {
		for _, r := range results {
			writeSlotTable(ew, wl, r)
		}
		return ew.err
	}
	ew.Printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	head := []string{"policy", "makespan"}
	for _, res := range wl.Resources {
		head = append(head, res+" util")
	}
	head = append(head, "mean completion", "unfinished tasks", "passes", "Var(D)")
	// Runs that chose a backfill mode compare how long jobs wait; the
	// columns are left out otherwise so earlier reports stay as they were.
	jobTimes := slices.ContainsFunc(results, func(r *Result) bool { return r.Settings.Backfill != "" })
	if jobTimes {
		head = append(head, "backfill", "mean wait", "max wait", "bounded slowdown")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range results {
		row := []string{string(r.Policy), FormatDuration(r.Makespan)}
		for _, u := range r.Utilization {
			row = append(row, percent(u))
		}
		row = append(row, FormatDuration(r.MeanCompletion()), fmt.Sprint(r.UnfinishedTasks), fmt.Sprint(r.Passes), formatVariance(r.DiscriminationVariance))
		if jobTimes {
			row = append(row, backfillName(r.Settings.Backfill), FormatDuration(r.MeanWait), FormatDuration(r.MaxWait), fmt.Sprintf("%.2f", r.MeanBoundedSlowdown))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()

	ew.Printf("\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "account\tpolicy\tβ end\tβ min\tusage\tcontrib\tjobs\tmean wait\tmean completion\tslowdown\tspeedup\tD")
	for a := range wl.Accounts {
		for i, r := range results {
			ar := r.Accounts[a]
			name := ar.Name
			if i > 0 {
				name = ""
			}
			speedup := "-"
			if s, ok := Speedup(results, r, a); ok {
				speedup = fmt.Sprintf("%.2f×", s)
			}
			jobs := fmt.Sprint(ar.Jobs)
			if ar.Unfinished > 0 {
				jobs += fmt.Sprintf(" (+%d unfinished)", ar.Unfinished)
			}
			policy := string(r.Policy)
			if jobTimes {
				policy += " (" + backfillName(r.Settings.Backfill) + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n",
				name, policy, formatBeta(ar.FinalBeta), formatBeta(ar.MinBeta),
				percent(ar.UsageShare), percent(ar.ContributionShare), jobs,
				FormatDuration(ar.MeanWait), FormatDuration(ar.MeanCompletion), ar.MeanSlowdown, speedup,
				formatDiscrimination(ar.Discrimination))
		}
	}
	tw.Flush()
	ew.Printf("\nβ end: sharing degree at the end (≥ 1: the account got at least what its own partition would have given it).\n")
	ew.Printf("β min: lowest β after the first tenth of the account's time in the run. usage/contrib: share of all resource-seconds vs share of contributions.\n")
	if findPolicy(results, "static") != nil {
		ew.Printf("speedup: mean completion time under static partitions divided by the policy's, over the jobs both completed.\n")
	}
	if jobTimes {
		ew.Printf("wait: from submission to start; bounded slowdown: mean of max(1, (wait+run)/max(run, 10s)); over the jobs completed.\n")
	}
	ew.Printf("D: FAWKES discrimination ∫(share held − share due)dt while the account had work, in share·hours (> 0: more than its due); Var(D) over the accounts, in (share·s)².\n")
	return ew.err
}

// backfillName is the mode's name, greedy for the zero value.
func backfillName(b sched.Backfill) string {
	if b == "" {
		return string(sched.BackfillGreedy)
	}
	return string(b)
}

func writeWorkloadHeader(ew *ErrWriter, wl *Workload, results []*Result) {
	ew.Printf("Workload: %s\n", wl.Name)
	ew.Printf("Cluster: %d node(s), capacity %s; %d accounts, %d jobs, %d tasks\n",
		len(wl.Nodes), formatCapacity(wl), len(wl.Accounts), len(wl.Jobs), wl.TotalTasks())
	if len(results) > 0 {
		s := results[0].Settings
		ew.Printf("Settings: window %s, quantum %v, placement %s, time-out %v\n", results[0].Window, s.Quantum, s.Placement, timeoutText(s.Timeout))
	}
	for _, n := range wl.Notes {
		ew.Printf("  %s\n", n)
	}
	for _, r := range results {
		if len(r.Unschedulable) == 0 {
			continue
		}
		tasks := 0
		for _, u := range r.Unschedulable {
			tasks += u.Tasks
		}
		ew.Printf("  %s: %d job(s) (%d tasks) can never run, e.g. job %d of %s: %s\n",
			r.Policy, len(r.Unschedulable), tasks, r.Unschedulable[0].ID, r.Unschedulable[0].Account, r.Unschedulable[0].Reason)
	}
}

// formatCapacity writes the cluster's capacity with units when known:
// <cpu 236 cores, mem 885 GB>.
func formatCapacity(wl *Workload) string {
	c := wl.Capacity()
	if len(wl.Units) != len(c) {
		return FormatVector(wl.Resources, c)
	}
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = fmt.Sprintf("%s %.6g %s", wl.Resources[i], x, wl.Units[i])
	}
	return "<" + strings.Join(parts, ", ") + ">"
}

func timeoutText(d time.Duration) string {
	if d <= 0 {
		return "off"
	}
	return d.String()
}

// writeSlotTable writes one policy's slotted replay like the paper's Table 1.
func writeSlotTable(ew *ErrWriter, wl *Workload, r *Result) {
	ew.Printf("\n%s\n", r.Policy)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "slot\t"
	for _, a := range wl.Accounts {
		head += a.Name + " run\t" + a.Name + " β\t" + a.Name + " ΣÜ\t"
	}
	fmt.Fprintln(tw, head)
	totals := make([]int, len(wl.Accounts))
	for _, s := range r.Slots {
		row := fmt.Sprintf("%d\t", s.Slot)
		for a := range wl.Accounts {
			totals[a] += s.Running[a]
			row += fmt.Sprintf("%d\t%s\t%g\t", s.Running[a], formatBeta(s.Beta[a]), s.Aggregate[a])
		}
		fmt.Fprintln(tw, row)
	}
	row := "total\t"
	for a := range wl.Accounts {
		row += fmt.Sprintf("%d\t\t\t", totals[a])
	}
	fmt.Fprintln(tw, row)
	tw.Flush()
}

// ErrWriter remembers the first write error so report code can write
// freely and check once (Err).
type ErrWriter struct {
	w   io.Writer
	err error
}

// NewErrWriter writes to w.
func NewErrWriter(w io.Writer) *ErrWriter { return &ErrWriter{w: w} }

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Printf formats to the writer; an error is kept for Err.
func (e *ErrWriter) Printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}

// Err is the first write error, or nil.
func (e *ErrWriter) Err() error { return e.err }
