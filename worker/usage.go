package worker

import (
	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// usage is what an attempt used, measured by its cgroup when it ended.
type usage struct {
	// CPUSeconds is the CPU time all its processes used.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// PeakMemBytes is the most memory it held at once (0: unknown, as on
	// a cgroup v2 kernel without memory.peak).
	PeakMemBytes int64 `json:"peak_mem_bytes,omitempty"`
	// OOMKilled says the kernel killed one of its processes because the
	// attempt reached its memory limit.
	OOMKilled bool `json:"oom_killed,omitempty"`
}

// withUsage adds what an attempt used, as its cgroup measured it (nil: it
// had none), to its end event. The ledger stores it on the attempt for
// users and admins (`longfair job` shows requested vs used); charges stay
// on what the attempt was allocated.
func withUsage(ev *longfairv1.TaskEvent, u *usage) *longfairv1.TaskEvent {
	if u != nil {
		ev.CpuSeconds, ev.PeakMemBytes, ev.OomKilled = u.CPUSeconds, u.PeakMemBytes, u.OOMKilled
	}
	return ev
}
