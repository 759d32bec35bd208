package dev

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/cli"
)

// runDemo submits a competing workload round after round and prints the
// fairness table whenever it changes, until ctx ends. In each round bio
// floods the cluster first and astro arrives while bio's tasks still queue,
// with a CPU array and a MIC array: the table shows the policy giving
// astro the freed cores first until their accumulated usage evens out.
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
			fmt.Fprintf(w, "\n== demo round %d: bio floods the cluster with 48 tasks of cpu=1; astro follows 6s later with 24 tasks of cpu=1 and 2 of mic=1 ==\n", round)
			submit(bio, fmt.Sprintf("demo-bio-%d", round), 48, map[string]float64{"cpu": 1, "mem": 256 << 20}, 5)
			if !sleepCtx(ctx, 6*time.Second) {
				return
			}
			submit(astro, fmt.Sprintf("demo-astro-%d", round), 24, map[string]float64{"cpu": 1, "mem": 256 << 20}, 5)
			submit(astro, fmt.Sprintf("demo-astro-mic-%d", round), 2, map[string]float64{"cpu": 1, "mic": 1}, 8)
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
	_ = cli.WatchFairness(ctx, c, 2*time.Second, w)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
