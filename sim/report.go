package sim

import (
	"math"
	"strconv"
	"time"

	"github.com/longfair/longfair/sched"
)

// Speedup is how many times faster the policy completed an account's jobs
// than static partitions did: static's mean completion time over the
// policy's, both taken over the jobs that completed under both (static can
// leave out jobs larger than a partition). ok is false when static is not
// among the results or no job of the account completed under both.
func Speedup(results []*Result, r *Result, account int) (speedup float64, ok bool) {
	static := findPolicy(results, sched.Static)
	if static == nil || len(static.Completions) != len(r.Completions) {
		return 0, false
	}
	var sumStatic, sumPolicy float64
	for j, c := range r.Completions {
		s := static.Completions[j]
		if c < 0 || s < 0 || r.jobAccount[j] != account {
			continue
		}
		sumStatic += s.Seconds()
		sumPolicy += c.Seconds()
	}
	if sumPolicy <= 0 {
		return 0, false
	}
	return sumStatic / sumPolicy, true
}

func findPolicy(results []*Result, p sched.Policy) *Result {
	for _, r := range results {
		if r.Policy == p {
			return r
		}
	}
	return nil
}

// MeanCompletion is the mean completion time over every account's jobs.
func (r *Result) MeanCompletion() time.Duration {
	sum, n := 0.0, 0
	for _, a := range r.Accounts {
		sum += a.MeanCompletion.Seconds() * float64(a.Jobs)
		n += a.Jobs
	}
	if n == 0 {
		return 0
	}
	return seconds(sum / float64(n))
}

// TotalTasksRun is the number of tasks started in the replay.
func (r *Result) TotalTasksRun() int {
	n := 0
	for _, a := range r.Accounts {
		n += a.TasksRun
	}
	return n
}

// formatBeta writes β with three decimals, "∞" before an account has any
// baseline.
func formatBeta(b float64) string {
	if math.IsInf(b, 1) {
		return "∞"
	}
	return strconv.FormatFloat(b, 'f', 3, 64)
}

// FormatDuration rounds for reading: whole seconds, or tenths under a minute.
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }
