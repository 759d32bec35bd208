package sim

import (
	"time"

	"github.com/longfair/longfair/ledger"
)

// sampler records β of every account over time. Sampling every event would
// cost O(accounts) per event and unbounded memory, so samples are at least
// gap apart, and when they reach twice the bound every other one is dropped
// and the gap doubles: the curve keeps an even resolution however long the
// replay runs.
type sampler struct {
	max   int
	gap   time.Duration
	next  ledger.Time
	times []ledger.Time
	beta  [][]float64

	scratch ledger.AccountFairness
}

func newSampler(w *Workload, maxSamples int) sampler {
	if maxSamples <= 0 {
		maxSamples = 1000
	}
	var lo, hi ledger.Time
	first := true
	for i := range w.Jobs {
		if w.Jobs[i].After != nil {
			continue
		}
		t := w.Jobs[i].Submit
		if first || t < lo {
			lo = t
		}
		if first || t > hi {
			hi = t
		}
		first = false
	}
	gap := max(hi.Sub(lo)/time.Duration(maxSamples), time.Millisecond)
	return sampler{max: maxSamples, gap: gap, beta: make([][]float64, len(w.Accounts))}
}

func (s *sampler) maybe(r *replay, t ledger.Time) {
	if len(s.times) > 0 && t < s.next {
		return
	}
	s.take(r, t)
}

func (s *sampler) take(r *replay, t ledger.Time) {
	for a := range r.w.Accounts {
		r.book.AccountInto(r.w.Accounts[a].Name, t, &s.scratch)
		s.beta[a] = append(s.beta[a], ledger.Beta(s.scratch.Usage, s.scratch.Baseline))
	}
	s.times = append(s.times, t)
	s.next = t.Add(s.gap)
	if len(s.times) >= 2*s.max {
		s.times = thin(s.times)
		for a := range s.beta {
			s.beta[a] = thin(s.beta[a])
		}
		s.gap *= 2
	}
}

// thin keeps every other element, first included.
func thin[T any](xs []T) []T {
	k := 0
	for i := 0; i < len(xs); i += 2 {
		xs[k] = xs[i]
		k++
	}
	return xs[:k]
}

// slotRecorder closes slots of slotted input as time passes them.
type slotRecorder struct {
	slot    time.Duration
	done    int
	results []SlotResult
}

// flush records every slot that ended at or before t. Tasks started at a
// time belong to the slot holding it, and every slot ending by t is closed
// before anything at t is applied.
func (s *slotRecorder) flush(r *replay, t ledger.Time) {
	if s.slot <= 0 {
		return
	}
	for {
		end := ledger.Time(s.done+1) * ledger.Time(s.slot)
		if end > t {
			return
		}
		res := SlotResult{
			Slot:      s.done,
			Running:   make([]int, len(r.w.Accounts)),
			Beta:      make([]float64, len(r.w.Accounts)),
			Aggregate: make([]float64, len(r.w.Accounts)),
		}
		for a := range r.w.Accounts {
			res.Running[a] = r.accts[a].slotStarted
			r.accts[a].slotStarted = 0
			f := r.book.Account(r.w.Accounts[a].Name, end)
			res.Beta[a] = ledger.Beta(f.Usage, f.Baseline)
			res.Aggregate[a] = f.Usage.Sum()
		}
		s.results = append(s.results, res)
		s.done++
	}
}
