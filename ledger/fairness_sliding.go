package ledger

import "sort"

// The sliding window keeps two FIFOs per account, both with running prefix
// sums so that a look at any later time is a binary search and a subtraction,
// not a walk: Account must not mutate, so it cannot expire entries as it goes.
// Events expire entries for real. Every rebaseAfter expirations (and at least
// as many as remain) the prefix sums are rebased to start at zero again, so
// they stay the size of what is in the window instead of growing with the
// account's lifetime and eating precision. When to rebase depends only on
// counts the persisted state carries, so a restored book rounds exactly like
// the book it was saved from.
const rebaseAfter = 16

// endedQueue holds the usage of ended tasks by end time: entry i is a task
// (or all tasks) that ended at ends[i], and cum holds, per entry, the running
// total of usage from the queue's zero through that entry.
type endedQueue struct {
	width   int
	ends    []Time    // non-decreasing
	cum     []float64 // width per entry
	base    []float64 // running total through the last expired entry, when hasBase
	hasBase bool      // false: the zero is zero (base keeps its memory for reuse)
	head    int       // first live entry
	expired int       // entries expired since the last rebase
}

func (q *endedQueue) live() int { return len(q.ends) - q.head }

func (q *endedQueue) at(i int) []float64 { return q.cum[i*q.width : (i+1)*q.width] }

// push appends usage demand·secs for tasks that ended at end, which must not
// be before the previous end. Tasks ending at the same time share one entry,
// so a job array that finishes together costs one entry.
func (q *endedQueue) push(end Time, demand Vector, secs float64) {
	n := len(q.ends)
	if q.live() > 0 && q.ends[n-1] == end {
		last := q.at(n - 1)
		for j, d := range demand {
			last[j] += d * secs
		}
		return
	}
	var prev []float64
	if q.live() > 0 {
		prev = q.at(n - 1)
	} else if q.hasBase {
		prev = q.base
	}
	q.ends = append(q.ends, end)
	for j, d := range demand {
		p := 0.0
		if prev != nil {
			p = prev[j]
		}
		q.cum = append(q.cum, p+d*secs)
	}
}

// expire drops the entries that ended before cut.
func (q *endedQueue) expire(cut Time) {
	for q.head < len(q.ends) && q.ends[q.head] < cut {
		if q.base == nil {
			q.base = make([]float64, q.width)
		}
		copy(q.base, q.at(q.head))
		q.hasBase = true
		q.head++
		q.expired++
	}
	switch {
	case q.live() == 0:
		q.ends, q.cum, q.hasBase = q.ends[:0], q.cum[:0], false
		q.head, q.expired = 0, 0
	case q.expired >= rebaseAfter && q.expired >= q.live():
		for i := q.head; i < len(q.ends); i++ {
			c := q.at(i)
			for j := range c {
				c[j] -= q.base[j]
			}
		}
		q.ends = append(q.ends[:0], q.ends[q.head:]...)
		q.cum = append(q.cum[:0], q.cum[q.head*q.width:]...)
		q.hasBase, q.head, q.expired = false, 0, 0
	}
}

// sumSince writes into out the usage of the live entries that ended at or
// after cut.
func (q *endedQueue) sumSince(cut Time, out Vector) {
	live := q.ends[q.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i] >= cut })
	if i == len(live) {
		clear(out)
		return
	}
	last := q.at(len(q.ends) - 1)
	var before []float64
	if i > 0 {
		before = q.at(q.head + i - 1)
	} else if q.hasBase {
		before = q.base
	}
	for j := range out {
		out[j] = last[j]
		if before != nil {
			out[j] -= before[j]
		}
	}
}

// segmentQueue holds the baseline rate's history as breakpoints: from
// starts[k] on the rate was rate k, until the next breakpoint (the last one
// is still open). cum holds, per breakpoint, the integral of the rate from
// the queue's zero up to starts[k].
type segmentQueue struct {
	width   int
	starts  []Time    // non-decreasing
	rates   []float64 // width per breakpoint
	cum     []float64 // width per breakpoint
	head    int       // first live breakpoint
	expired int       // breakpoints expired since the last rebase
}

func (q *segmentQueue) live() int { return len(q.starts) - q.head }

func (q *segmentQueue) rate(k int) []float64 { return q.rates[k*q.width : (k+1)*q.width] }

func (q *segmentQueue) cumAt(k int) []float64 { return q.cum[k*q.width : (k+1)*q.width] }

// set makes rate the baseline rate from t on; t must not be before the last
// breakpoint.
func (q *segmentQueue) set(t Time, rate Vector) {
	n := len(q.starts)
	if q.live() == 0 {
		if rate.IsZero() {
			return // no history yet, and none to start
		}
		q.starts = append(q.starts, t)
		q.rates = append(q.rates, rate...)
		q.cum = append(q.cum, make([]float64, q.width)...)
		return
	}
	last := q.rate(n - 1)
	if equalRates(last, rate) {
		return
	}
	if q.starts[n-1] == t {
		copy(last, rate) // the old rate never lasted any time
		return
	}
	dt := spanSeconds(t - q.starts[n-1])
	q.starts = append(q.starts, t)
	q.rates = append(q.rates, rate...)
	prev := q.cumAt(n - 1)
	last = q.rate(n - 1) // append may have moved the slice
	for j := range rate {
		q.cum = append(q.cum, prev[j]+last[j]*dt)
	}
}

// expire drops the segments that ended at or before cut. The open segment
// always stays.
func (q *segmentQueue) expire(cut Time) {
	for q.head+1 < len(q.starts) && q.starts[q.head+1] <= cut {
		q.head++
		q.expired++
	}
	if q.expired >= rebaseAfter && q.expired >= q.live() {
		// Backwards, so the head's totals (the new zero) change last.
		zero := q.cumAt(q.head)
		for k := len(q.starts) - 1; k >= q.head; k-- {
			c := q.cumAt(k)
			for j := range c {
				c[j] -= zero[j]
			}
		}
		q.starts = append(q.starts[:0], q.starts[q.head:]...)
		q.rates = append(q.rates[:0], q.rates[q.head*q.width:]...)
		q.cum = append(q.cum[:0], q.cum[q.head*q.width:]...)
		q.head, q.expired = 0, 0
	}
}

// integral writes into out the integral of the rate over [cut, now], for a
// now no earlier than the last breakpoint. It adds positive pieces (the part
// of the segment holding cut, whole segments as a difference of prefix sums,
// the open segment) rather than subtracting two running totals, so a long
// constant rate does not cancel away precision.
func (q *segmentQueue) integral(cut, now Time, out Vector) {
	clear(out)
	n := len(q.starts)
	if q.live() == 0 || now <= cut {
		return
	}
	live := q.starts[q.head:]
	// k: the last breakpoint at or before cut, or the first live one.
	k := q.head + max(0, sort.Search(len(live), func(i int) bool { return live[i] > cut })-1)
	from := max(cut, q.starts[k])
	if k == n-1 {
		r := q.rate(k)
		dt := spanSeconds(now - from)
		for j := range out {
			out[j] = r[j] * dt
		}
		return
	}
	rk, rl := q.rate(k), q.rate(n-1)
	first := spanSeconds(q.starts[k+1] - from)
	open := spanSeconds(now - q.starts[n-1])
	ck, cl := q.cumAt(k+1), q.cumAt(n-1)
	for j := range out {
		out[j] = rk[j]*first + (cl[j] - ck[j]) + rl[j]*open
	}
}

func equalRates(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return true
}
