package fsm

import (
	"math"
	"slices"

	"github.com/longfair/longfair/ledger"
)

// Measured usage. A confined worker measures what each attempt used with
// its cgroup and sends it in the attempt's end event: CPU seconds, peak
// memory, and whether the kernel killed it for reaching its memory
// request. The ledger keeps it on the attempt for users and admins
// (requested vs used, as Slurm's seff shows); fairness and SU charges
// stay on what the attempt was allocated, so none of this changes them.

// maxCPUSeconds bounds a reported CPU time: a century of a million cores.
const maxCPUSeconds = 1e17

// checkUsage refuses an event whose measured usage cannot be.
func checkUsage(i int, e TaskEvent) *Error {
	if math.IsNaN(e.CPUSeconds) || e.CPUSeconds < 0 || e.CPUSeconds > maxCPUSeconds {
		return invalid("event %d reports %v CPU seconds: want a number from 0 to %g", i, e.CPUSeconds, float64(maxCPUSeconds))
	}
	if e.PeakMemBytes < 0 {
		return invalid("event %d reports a peak memory of %d bytes: want 0 or more", i, e.PeakMemBytes)
	}
	return nil
}

// recordUsage puts an end event's measured usage on its attempt, and the
// reason of an OOM kill, worded with the attempt's memory request.
func (b *batch) recordUsage(a *attemptRecord, e TaskEvent) {
	a.CPUSeconds, a.PeakMemBytes = e.CPUSeconds, e.PeakMemBytes
	if !e.OOMKilled {
		return
	}
	a.Reason = "exceeded its memory request"
	if i := slices.Index(b.st.settings.Resources, "mem"); i >= 0 && i < len(a.Demand) && a.Demand[i] > 0 {
		a.Reason += " of " + ledger.FormatBytes(a.Demand[i])
	}
}
