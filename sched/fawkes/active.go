package fawkes

// MeanActiveWeight is the mean weight of the active accounts that have one:
// the weight an account starts with when it gains work. It is 1 when no
// active account has a weight yet.
func MeanActiveWeight(weights []float64, active []bool) float64 {
	sum, n := 0.0, 0
	for i, on := range active {
		if on && weights[i] > 0 {
			sum += weights[i]
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// NormalizeActive returns each active account's weight over the active
// accounts' total, and 0 for the others.
func NormalizeActive(weights []float64, active []bool) []float64 {
	total := 0.0
	for i, on := range active {
		if on {
			total += weights[i]
		}
	}
	out := make([]float64, len(weights))
	for i, on := range active {
		if on && total > 0 {
			out[i] = weights[i] / total
		}
	}
	return out
}

// PartitionUse is the fraction of a partition in use, at most 1: a shrunk
// partition may hold more than its new size until its tasks end.
func PartitionUse(used, partition float64) float64 {
	switch {
	case used <= 0:
		return 0
	case partition <= 0:
		return 1
	}
	return min(1, used/partition)
}
