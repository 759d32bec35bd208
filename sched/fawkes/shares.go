package fawkes

// Shares turns weights into partition sizes, fractions of the cluster.
//
// Every active account gets at least its minimum share (FAWKES's core
// nodes, mins[i]); the rest of the cluster goes to the active accounts in
// proportion to their weights, taking from those above their minimum and
// never pushing one below it (§4.2.1): s_i = max(min_i, λ·w_i) with λ such
// that the shares of the active accounts add up to 1. Under the none
// weighting every active account keeps its minimum share and nothing more.
// Inactive accounts get 0. When the minimum shares alone exceed the
// cluster they are scaled down to fit.
func Shares(cfg Config, weights, mins []float64, active []bool) []float64 {
	s := make([]float64, len(weights))
	minTotal := 0.0
	for i := range s {
		if active[i] {
			minTotal += mins[i]
		}
	}
	if minTotal >= 1 || cfg.WithDefaults().Weighting == None {
		scale := 1.0
		if minTotal > 1 {
			scale = 1 / minTotal
		}
		for i := range s {
			if active[i] {
				s[i] = mins[i] * scale
			}
		}
		return s
	}
	// Water-filling: pin at their minimum the accounts λ·w_i would put
	// below it, and spread what is left over the others by weight, until
	// nobody else needs pinning. Each round pins at least one account.
	pinned := make([]bool, len(weights))
	for {
		rest, weight := 1.0, 0.0
		for i := range s {
			switch {
			case !active[i]:
			case pinned[i]:
				rest -= mins[i]
			default:
				weight += weights[i]
			}
		}
		if weight <= 0 {
			// Everyone left has no weight: they share the rest equally.
			n := 0
			for i := range s {
				if active[i] && !pinned[i] {
					n++
				}
			}
			for i := range s {
				switch {
				case !active[i]:
				case pinned[i] || n == 0:
					s[i] = mins[i]
				default:
					s[i] = max(mins[i], rest/float64(n))
				}
			}
			return s
		}
		lambda := rest / weight
		again := false
		for i := range s {
			if active[i] && !pinned[i] && lambda*weights[i] < mins[i] {
				pinned[i] = true
				again = true
			}
		}
		if !again {
			for i := range s {
				switch {
				case !active[i]:
				case pinned[i]:
					s[i] = mins[i]
				default:
					s[i] = lambda * weights[i]
				}
			}
			return s
		}
	}
}

// MinimumShares is every account's minimum share: the guarantee times its
// contribution share w_i/Σw (equal contributions when nobody contributes).
func MinimumShares(cfg Config, contributions []float64) []float64 {
	total := 0.0
	for _, w := range contributions {
		total += w
	}
	mins := make([]float64, len(contributions))
	for i, w := range contributions {
		if total > 0 {
			mins[i] = cfg.Guarantee * w / total
		} else {
			mins[i] = cfg.Guarantee / float64(len(contributions))
		}
	}
	return mins
}
