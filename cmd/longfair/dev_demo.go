package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// runDemo submits a competing workload round after round and prints the
// fairness table whenever it changes, until ctx ends. In each round bio
// floods the cluster first and astro arrives a little later with a CPU
// array and a MIC array, so the table shows astro's β dip and recover as
// the policy gives it the lead.
func runDemo(ctx context.Context, d *devCluster, w io.Writer) {
	c, err := client.New(strings.Split(d.Addr, ","), client.WithToken(d.Token), client.WithConsistentReads(true))
	if err != nil {
		fmt.Fprintln(w, "longfair dev --demo:", err)
		return
	}
	defer c.Close()
	accounts := devAccounts()
	astro, bio := accounts[0], accounts[1]
	submit := func(a devAccount, name string, tasks int64, demand map[string]float64, secs int) {
		_, err := c.Submit(ctx, client.JobSpec{Account: a.name, User: a.user, Name: name, Tasks: tasks, Demand: demand,
			Walltime: 5 * time.Minute, Command: []string{"sleep", fmt.Sprint(secs)}})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(w, "longfair dev --demo: submit %s for %s: %v\n", name, a.name, err)
		}
	}
	go func() {
		for round := 1; ctx.Err() == nil; round++ {
			fmt.Fprintf(w, "\n== demo round %d: bio submits 24 tasks of cpu=1; astro follows in 10s with 16 tasks of cpu=1 and 2 of mic=1 ==\n", round)
			submit(bio, fmt.Sprintf("demo-bio-%d", round), 24, map[string]float64{"cpu": 1, "mem": 256 << 20}, 4)
			if !sleepCtx(ctx, 10*time.Second) {
				return
			}
			submit(astro, fmt.Sprintf("demo-astro-%d", round), 16, map[string]float64{"cpu": 1, "mem": 256 << 20}, 4)
			submit(astro, fmt.Sprintf("demo-astro-mic-%d", round), 2, map[string]float64{"cpu": 1, "mic": 1}, 6)
			// The next round starts when this one has drained.
			for ctx.Err() == nil {
				if !sleepCtx(ctx, 2*time.Second) {
					return
				}
				r, err := c.Fairness().GetFairnessReport(ctx, &longfairv1.GetFairnessReportRequest{})
				if err != nil {
					continue
				}
				busy := int64(0)
				for _, a := range r.GetAccounts() {
					busy += a.GetPendingTasks() + a.GetRunningTasks()
				}
				if busy == 0 {
					break
				}
			}
		}
	}()
	f := &clientFlags{output: "table", timeout: 10 * time.Second}
	_ = watchFairness(ctx, c, f, "", 2*time.Second, w)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
