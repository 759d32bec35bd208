package ledger

import "math"

// TaskGroup is a run of identical tasks: Count tasks that each demand Demand.
// Job arrays are passed this way so that a 10,000-task array costs one entry.
type TaskGroup struct {
	Demand Vector
	Count  int
}

// Share returns an account's non-sharing partition S_i = R·w_i/Σw (formula 1
// of the H-MRF paper).
func Share(capacity Vector, weight, totalWeight float64) Vector {
	s := capacity.Clone()
	if totalWeight <= 0 {
		return NewVector(len(capacity))
	}
	s.Scale(weight / totalWeight)
	return s
}

// NonSharingRate is the allocation an account would hold alone in its own
// partition: the largest prefix of its active tasks (running first, then
// pending in queue order) that fits in share. Tasks are indivisible, which is
// why this is a prefix of tasks and not the per-resource min{d, s} of the
// paper's formula 2; the task-granular form is what reproduces the paper's
// Example 4 (β_A = 1.375 at t2).
func NonSharingRate(share Vector, active []TaskGroup) Vector {
	return NonSharingRateInto(NewVector(len(share)), NewVector(len(share)), share, active)
}

// NonSharingRateInto is NonSharingRate written into rate, with room as
// scratch (both as long as share): for a caller that computes it at every
// step of a replay and keeps the memory.
func NonSharingRateInto(rate, room, share Vector, active []TaskGroup) Vector {
	clear(rate)
	copy(room, share)
	for _, g := range active {
		if g.Count <= 0 {
			continue
		}
		k := fitCount(room, g.Demand, g.Count)
		rate.AddScaled(g.Demand, float64(k))
		room.AddScaled(g.Demand, -float64(k))
		if k < g.Count {
			break
		}
	}
	return rate
}

// fitCount is how many of count tasks of demand d fit in room.
func fitCount(room, d Vector, count int) int {
	k := float64(count)
	for j, x := range d {
		if x <= 0 {
			continue
		}
		k = math.Min(k, math.Floor((room[j]+fitEpsilon)/x))
	}
	if k < 0 {
		return 0
	}
	return int(k)
}

// Beta is the sharing degree β_i = min_j Ü_ij / ∫baseline_ij over the
// resources with a non-zero baseline (formulas 2–3). β < 1 is sharing loss.
// An account with no baseline at all (it never had a task that fits its
// partition) has no sharing loss to make up; Beta returns +Inf for it.
func Beta(usage, baseline Vector) float64 {
	beta := math.Inf(1)
	for j, b := range baseline {
		if b <= 0 {
			continue
		}
		beta = math.Min(beta, usage[j]/b)
	}
	return beta
}
