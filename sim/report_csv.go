package sim

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// WriteCSV writes the results as CSV with a header row. Slotted results get
// one row per policy, slot and account (running, beta, aggregate); other
// results one row per policy and account with the figures the table shows
// and the account's usage of each resource in resource-seconds. An
// undefined β is written as an empty field.
func WriteCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	if len(results) > 0 && results[0].Slots != nil {
		cw.Write([]string{"policy", "slot", "account", "running", "beta", "aggregate"})
		for _, r := range results {
			for _, s := range r.Slots {
				for a, ar := range r.Accounts {
					cw.Write([]string{string(r.Policy), strconv.Itoa(s.Slot), ar.Name,
						strconv.Itoa(s.Running[a]), csvFloat(s.Beta[a]), csvFloat(s.Aggregate[a])})
				}
			}
		}
		cw.Flush()
		return cw.Error()
	}
	head := []string{"policy", "account", "weight", "contribution_share", "usage_share", "beta_final", "beta_min",
		"tasks_run", "jobs", "unfinished_jobs", "mean_wait_s", "mean_completion_s", "mean_slowdown", "speedup_vs_static",
		"discrimination_share_s"}
	if len(results) > 0 {
		for _, res := range results[0].Resources {
			head = append(head, "usage_"+res+"_s")
		}
	}
	cw.Write(head)
	for _, r := range results {
		for a, ar := range r.Accounts {
			speedup := ""
			if s, ok := Speedup(results, r, a); ok {
				speedup = csvFloat(s)
			}
			row := []string{string(r.Policy), ar.Name, csvFloat(ar.Weight), csvFloat(ar.ContributionShare),
				csvFloat(ar.UsageShare), csvFloat(ar.FinalBeta), csvFloat(ar.MinBeta),
				strconv.Itoa(ar.TasksRun), strconv.Itoa(ar.Jobs), strconv.Itoa(ar.Unfinished),
				csvFloat(ar.MeanWait.Seconds()), csvFloat(ar.MeanCompletion.Seconds()), csvFloat(ar.MeanSlowdown), speedup,
				csvFloat(ar.Discrimination)}
			for _, u := range ar.Usage {
				row = append(row, csvFloat(u))
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
