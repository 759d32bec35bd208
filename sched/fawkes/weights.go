package fawkes

import "math"

// Sample is one account's state at an instant, the quantities the weighting
// policies look at. It holds until the next sample of the account, except
// Slowdown, which grows by SlowdownGrowth per second meanwhile (a waiting
// job's slowdown grows with its wait).
type Sample struct {
	// WaitingJobs counts the jobs with tasks waiting to start (JD, JT).
	WaitingJobs float64
	// WaitingTasks counts the tasks waiting to start (TD, TT).
	WaitingTasks float64
	// WaitingWork is the declared work of the waiting tasks: tasks ×
	// walltime in seconds × the share of the cluster one task takes (DD).
	WaitingWork float64
	// ProcessorUse and DiskUse are the fractions of the account's
	// partition's processors and disk (or memory) in use (PU, DU, RU).
	ProcessorUse, DiskUse float64
	// Slowdown is the mean slowdown of the waiting jobs — time since
	// submission over the job's time alone on an empty cluster — and
	// SlowdownGrowth how fast it grows per second (JS).
	Slowdown, SlowdownGrowth float64
}

// Averages are an account's samples averaged over an interval, with what it
// completed during it.
type Averages struct {
	Sample
	// CompletedJobs and CompletedTasks count completions in the interval.
	CompletedJobs, CompletedTasks float64
}

// Weights computes every account's weight from its averages under the
// weighting (FAWKES Eq. 4: w_i = y_i/Σ_k y_k over the active accounts).
// Inactive accounts get 0. When no active account has a positive y, the
// active accounts weigh the same. The config's zero fields mean their
// defaults.
func Weights(cfg Config, avg []Averages, active []bool) []float64 {
	cfg = cfg.WithDefaults()
	w := make([]float64, len(avg))
	total, n := 0.0, 0
	for i := range avg {
		if !active[i] {
			continue
		}
		n++
		w[i] = max(0, measure(cfg, &avg[i]))
		if math.IsNaN(w[i]) || math.IsInf(w[i], 0) {
			w[i] = 0
		}
		total += w[i]
	}
	for i := range w {
		switch {
		case !active[i]:
		case total <= 0:
			w[i] = 1 / float64(n)
		default:
			w[i] /= total
		}
	}
	return w
}

// measure is y_i, the quantity an account's weight is proportional to.
func measure(cfg Config, a *Averages) float64 {
	switch cfg.Weighting {
	case JD:
		return a.WaitingJobs
	case DD:
		return a.WaitingWork
	case TD:
		return a.WaitingTasks
	case PU:
		return a.ProcessorUse
	case DU:
		return a.DiskUse
	case RU:
		return cfg.Psi*a.ProcessorUse + (1-cfg.Psi)*a.DiskUse
	case JS:
		return a.Slowdown
	case JT:
		return throughputWeight(cfg.Base, a.CompletedJobs, a.WaitingJobs)
	case TT:
		return throughputWeight(cfg.Base, a.CompletedTasks, a.WaitingTasks)
	case Equal:
		return 1
	}
	return 0 // None: weights play no part
}

// throughputWeight is FAWKES Eq. 6, a^(−q) with q the completions over the
// waiting: an account that completes little of what waits gets up to a
// times the weight of one that keeps up. With nothing waiting q is
// infinite and the weight 0.
func throughputWeight(base, completed, waiting float64) float64 {
	if waiting <= 0 {
		return 0
	}
	return math.Pow(base, -completed/waiting)
}
