package cli

import (
	"fmt"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// Requested vs used, as Slurm's seff shows it: a confined worker measures
// each attempt's CPU seconds and peak memory (unset on an unconfined
// one). CPU efficiency is the CPU time used over what the attempt was
// allocated: its cpu request times its runtime.

// cpuEfficiency is an attempt's CPU efficiency, "87.5%", or "-" when it
// was not measured or requested no cpu.
func cpuEfficiency(job *longfairv1.Job, t *longfairv1.Task) string {
	cores := job.GetDemand()["cpu"]
	rt := t.GetRuntime().AsDuration().Seconds()
	// A parallel task's usage is measured on its head node only (its
	// other nodes report nothing but a loss): no efficiency for it.
	if !measured(t) || cores <= 0 || rt <= 0 || len(t.GetNodes()) > 1 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*t.GetCpuSeconds()/(cores*rt))
}

// measured reports whether the attempt's worker measured what it used.
func measured(t *longfairv1.Task) bool {
	return t.GetCpuSeconds() > 0 || t.GetPeakMemBytes() > 0
}

// memPeak is an attempt's peak memory, "101M", or "-".
func memPeak(t *longfairv1.Task) string {
	if t.GetPeakMemBytes() <= 0 {
		return "-"
	}
	return client.FormatQuantity("mem", float64(t.GetPeakMemBytes()))
}

// jobUsage sums the measured attempts of a job for its summary: the CPU
// efficiency over all of them, and the highest peak memory against the
// request. ok is false when none was measured.
func jobUsage(job *longfairv1.Job, tasks []*longfairv1.Task) (cpu, mem string, ok bool) {
	var used, allocated float64
	var peak int64
	for _, t := range tasks {
		if !measured(t) {
			continue
		}
		ok = true
		used += t.GetCpuSeconds()
		allocated += job.GetDemand()["cpu"] * t.GetRuntime().AsDuration().Seconds()
		peak = max(peak, t.GetPeakMemBytes())
	}
	if !ok {
		return "", "", false
	}
	cpu = fmt.Sprintf("%.2f CPU seconds used", used)
	if allocated > 0 {
		cpu = fmt.Sprintf("%s of %.2f allocated (%.1f%% efficiency)", cpu, allocated, 100*used/allocated)
	}
	if job.GetNodes() > 1 {
		// Measured on each task's head node, against its one node's share.
		cpu += " on the tasks' first nodes"
	}
	mem = "peak " + client.FormatQuantity("mem", float64(peak))
	if req := job.GetDemand()["mem"]; req > 0 {
		mem = fmt.Sprintf("%s of %s requested (%.1f%%)", mem, client.FormatQuantity("mem", req), 100*float64(peak)/req)
	}
	return cpu, mem, true
}
