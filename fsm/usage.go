package fsm

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// UsageQuery selects a usage report: attempts that held resources during
// [From, To), grouped by account or by user, optionally of one account.
type UsageQuery struct {
	From, To ledger.Time
	ByUser   bool
	Account  string
	// Now is when running attempts are counted up to; it is raised to the
	// last applied command's time (so 0 means that time).
	Now ledger.Time
	// Split cuts [From, To) into periods, each reported on its own rows:
	// strictly increasing times inside (From, To).
	Split []ledger.Time
}

// UsageRow is one account's (or user's) usage over the range.
type UsageRow struct {
	// Period is where the row's period begins: From, or a time of Split.
	Period ledger.Time
	// Key is the account or user name.
	Key string
	// Attempts is how many task attempts held resources in the range.
	Attempts int64
	// Usage is resource-seconds, each attempt clipped to the range.
	Usage map[string]float64
	// Runtime is the attempts' time in the range, summed.
	Runtime time.Duration
	// Charged is what the attempts that ended in the range were charged.
	Charged ledger.SU
	// Ended is how many attempts ended in the range: the ones Charged
	// covers. Measured is how many of those a confined worker measured;
	// the fields below sum only those, so attempts of unconfined nodes
	// (no measurement) neither look idle nor dilute the efficiency.
	Ended, Measured int64
	// CPUAllocated is the CPU-seconds the Measured attempts were given:
	// the cpu they held on the measured node times their charged runtime.
	// CPUUsed is the CPU seconds their cgroups counted. Both are whole
	// attempts, not clipped to the range (a cgroup gives one total, not a
	// timeline), so efficiency is CPUUsed/CPUAllocated over the same set.
	CPUAllocated, CPUUsed float64
	// PeakMemBytes is the largest peak memory of the Measured attempts and
	// PeakMemRequested that same attempt's mem request (see usageOf).
	PeakMemBytes     int64
	PeakMemRequested int64
}

// Usage sums resource usage and charges over a time range. An attempt
// holds its resources from when it started (or was placed, if no start was
// reported) until it ended, or until q.Now while it still runs.
func (f *FSM) Usage(q UsageQuery) ([]UsageRow, error) {
	periods, err := usagePeriods(q)
	if err != nil {
		return nil, err
	}
	var rows []UsageRow
	err = f.view(func(rs readSnap, tx *bolt.Tx) error {
		sum := newUsageSum(q, periods, rs)
		// The attempts still holding resources, then the ended ones that
		// can overlap the range (usage_index.go): those that ended from
		// From on, until To plus the longest any attempt ever held.
		tasks := tx.Bucket(bucketTasks)
		c := tx.Bucket(bucketTasksActive).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			var a attemptRecord
			if ok, err := getJSON(tasks, k, &a); err != nil || !ok {
				return fmt.Errorf("active attempt %x: missing or unreadable record (%v): the state file is damaged; restore a snapshot", k, err)
			}
			if a.State.active() {
				sum.add(&a, k)
			}
		}
		idx := tx.Bucket(bucketTasksEnded)
		if idx.Get(keyEndedBuilt) == nil {
			return fmt.Errorf("the index of ended attempts is missing: the state file is damaged; restore a snapshot")
		}
		until := q.To
		if span := ledger.Time(endedMaxSpan(idx)); until < math.MaxInt64-span {
			until += span
		} else {
			until = math.MaxInt64
		}
		ic := idx.Cursor()
		var a attemptRecord
		for k, v := ic.Seek(u64(uint64(max(q.From, 0)))); k != nil; k, v = ic.Next() {
			if len(k) != endedKeyLen {
				continue
			}
			if ledger.Time(readU64(k[:8])) >= until {
				break
			}
			ok, err := decodeEnded(k, v, q.Account, &a)
			if err != nil {
				return err
			}
			if ok {
				sum.add(&a, k[8:])
			}
		}
		rows = sum.rows()
		return nil
	})
	return rows, err
}

// usagePeriods checks q's range and cuts and returns where its periods
// begin: periods[i] starts period i, which ends where i+1 starts, the last
// at To.
func usagePeriods(q UsageQuery) ([]ledger.Time, error) {
	if q.To <= q.From {
		return nil, invalid("usage range [%s, %s) is empty: give a from time before the to time", formatTime(q.From), formatTime(q.To))
	}
	periods := append([]ledger.Time{q.From}, q.Split...)
	for i := 1; i < len(periods); i++ {
		if periods[i] <= periods[i-1] || periods[i] >= q.To {
			return nil, invalid("usage period cut %s is not after %s and before %s: give increasing times inside the range", formatTime(periods[i]), formatTime(periods[i-1]), formatTime(q.To))
		}
	}
	return periods, nil
}

// usageSum sums a usage report's rows from attempts added in any order.
type usageSum struct {
	q         UsageQuery
	periods   []ledger.Time
	resources []string
	now       ledger.Time
	groups    map[usageKey]*usageGroup
}

type usageKey struct {
	period int
	key    string
}

func newUsageSum(q UsageQuery, periods []ledger.Time, rs readSnap) *usageSum {
	return &usageSum{q: q, periods: periods, resources: rs.resources, now: max(q.Now, rs.now), groups: make(map[usageKey]*usageGroup)}
}

// periodEnd is where period i ends.
func (s *usageSum) periodEnd(i int) ledger.Time {
	if i+1 < len(s.periods) {
		return s.periods[i+1]
	}
	return s.q.To
}

// periodOf is the period holding t (From ≤ t < To).
func (s *usageSum) periodOf(t ledger.Time) int {
	i, found := slices.BinarySearch(s.periods, t)
	if !found {
		i--
	}
	return i
}

func (s *usageSum) group(p int, key string) *usageGroup {
	k := usageKey{p, key}
	g := s.groups[k]
	if g == nil {
		g = &usageGroup{row: UsageRow{Period: s.periods[p], Key: key}, usage: ledger.NewVector(len(s.resources))}
		s.groups[k] = g
	}
	return g
}

// add counts attempt a, whose key in the tasks bucket is attempt: in every
// period it held resources in, and its charge in the one it ended in.
func (s *usageSum) add(a *attemptRecord, attempt []byte) {
	q := s.q
	if q.Account != "" && a.Account != q.Account {
		return
	}
	if a.State == TaskQueued {
		return // waiting in a look-ahead queue: it holds nothing yet
	}
	end := a.EndedAt
	if a.State.active() {
		end = s.now
	}
	lo, hi := max(a.heldFrom(), q.From), min(end, q.To)
	charged := !a.State.active() && a.EndedAt >= q.From && a.EndedAt < q.To
	if hi <= lo && !charged {
		return
	}
	key := a.Account
	if q.ByUser {
		key = a.User
	}
	if hi > lo {
		for p := s.periodOf(lo); p < len(s.periods) && s.periods[p] < hi; p++ {
			g := s.group(p, key)
			g.row.Attempts++
			span := min(hi, s.periodEnd(p)).Sub(max(lo, s.periods[p]))
			g.row.Runtime += span
			g.usage.AddScaled(pad(a.Demand, len(s.resources)), span.Seconds())
		}
	}
	if charged {
		g := s.group(s.periodOf(a.EndedAt), key)
		if hi <= lo || s.periodOf(a.EndedAt) != s.periodOf(max(hi-1, lo)) {
			g.row.Attempts++ // ended here without running here
		}
		g.row.Charged += a.Charged
		g.row.Ended++
		g.add(usageOf(a, s.resources), attempt)
	}
}

// rows are the sums, by period, then key.
func (s *usageSum) rows() []UsageRow {
	keys := make([]usageKey, 0, len(s.groups))
	for k := range s.groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y usageKey) int {
		if x.period != y.period {
			return x.period - y.period
		}
		return strings.Compare(x.key, y.key)
	})
	rows := make([]UsageRow, 0, len(keys))
	for _, k := range keys {
		g := s.groups[k]
		g.row.Usage = named(s.resources, g.usage)
		rows = append(rows, g.row)
	}
	return rows
}

// usageGroup is one row of a usage report being summed.
type usageGroup struct {
	row   UsageRow
	usage ledger.Vector
	// peakAttempt is the key of the attempt whose peak memory the row
	// shows, in the tasks bucket.
	peakAttempt []byte
}

// add counts one ended attempt's measurement into the row (UsageRow.add).
// Of attempts with the same peak, the row shows the first one's request
// in key order, whatever order they are read in.
func (g *usageGroup) add(u AttemptUsage, attempt []byte) {
	peak := g.row.PeakMemBytes
	g.row.add(u)
	switch {
	case g.row.PeakMemBytes != peak:
		g.peakAttempt = slices.Clone(attempt)
	case u.Measured && peak > 0 && u.PeakMemBytes == peak && bytes.Compare(attempt, g.peakAttempt) < 0:
		g.row.PeakMemRequested, g.peakAttempt = u.MemRequested, slices.Clone(attempt)
	}
}

// AttemptUsage is one ended attempt's measured usage beside what it was
// allocated on the node that measured it.
type AttemptUsage struct {
	// Measured is false for an attempt of an unconfined worker, or one
	// that ended without a report (its node was lost): it has no numbers.
	Measured     bool
	CPUSeconds   float64
	PeakMemBytes int64
	// CPUAllocated is cpu × runtime and MemRequested the mem request, both
	// of the node that measured the attempt.
	CPUAllocated float64
	MemRequested int64
}

// usageOf is a's measured usage against its allocation. A parallel
// task's end event comes from its head node, whose cgroup holds only the
// head's share (worker/allocation.go), so it is compared with the
// per-node demand: the whole task's demand would put a 4-node job that
// keeps every core busy at 25%.
//
// A confined attempt is never measured at zero peak memory (its own
// process takes some), so zero CPU and memory mean "not measured", as
// `longfair job` reads it too.
func usageOf(a *attemptRecord, resources []string) AttemptUsage {
	u := AttemptUsage{Measured: a.CPUSeconds > 0 || a.PeakMemBytes > 0, CPUSeconds: a.CPUSeconds, PeakMemBytes: a.PeakMemBytes}
	if !u.Measured {
		return AttemptUsage{}
	}
	d := a.nodeDemand()
	if k := slices.Index(resources, "cpu"); k >= 0 && k < len(d) {
		u.CPUAllocated = d[k] * a.Runtime.Seconds()
	}
	if k := slices.Index(resources, "mem"); k >= 0 && k < len(d) {
		u.MemRequested = int64(math.Round(d[k]))
	}
	return u
}

// add counts one ended attempt's measurement into the row. Memory is the
// largest peak with that attempt's own request, not a sum of peak ×
// runtime: a cgroup reports a peak, not how long it was held, so
// "mem-seconds used" would be a number nothing measured and no auditor
// could check, while the largest peak is the maximum of the export's
// PEAK_MEM_BYTES column over the same charge lines. Pairing it with the
// same attempt's request (not the largest request of any attempt) keeps
// "P of R" about one attempt, as seff shows it. Of equal peaks the row
// keeps the first attempt's in key order (usageGroup.add), so the report
// does not depend on the order it reads attempts in.
func (r *UsageRow) add(u AttemptUsage) {
	if !u.Measured {
		return
	}
	r.Measured++
	r.CPUAllocated += u.CPUAllocated
	r.CPUUsed += u.CPUSeconds
	if u.PeakMemBytes > r.PeakMemBytes {
		r.PeakMemBytes, r.PeakMemRequested = u.PeakMemBytes, u.MemRequested
	}
}

// ChargeUsage returns the measured usage of the attempts that the charge
// entries ids (chargeID's form) bill, keyed by id, for the ledger export.
// The journal entries themselves stay as hashed: the measurement lives on
// the attempt record and is joined here on read. An id that names no
// attempt is left out.
func (f *FSM) ChargeUsage(ids []string) (map[string]AttemptUsage, error) {
	out := make(map[string]AttemptUsage, len(ids))
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		b := tx.Bucket(bucketTasks)
		for _, id := range ids {
			job, task, attempt, ok := parseChargeID(id)
			if !ok {
				continue
			}
			var a attemptRecord
			found, err := getJSON(b, taskKey(job, task, attempt), &a)
			if err != nil {
				return fmt.Errorf("read attempt of charge %s: %w", id, err)
			}
			if found {
				out[id] = usageOf(&a, rs.resources)
			}
		}
		return nil
	})
	return out, err
}

// parseChargeID reads back a chargeID, refusing anything chargeID would
// not have written (so "job-1.task-01.attempt-1" names nothing).
func parseChargeID(id string) (job uint64, task int64, attempt int, ok bool) {
	if _, err := fmt.Sscanf(id, "job-%d.task-%d.attempt-%d", &job, &task, &attempt); err != nil {
		return 0, 0, 0, false
	}
	return job, task, attempt, chargeID(job, task, attempt) == id
}
