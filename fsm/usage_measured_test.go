package fsm

import (
	"math"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// measuredAttempt is one attempt of the usage test: what it asked for
// (per node), where it ran, when it ended and what its worker measured
// (zero: an unconfined worker measured nothing).
type measuredAttempt struct {
	job       uint64
	user      string
	nodes     []string
	cores     float64
	mem       float64
	runtime   time.Duration
	endAt     time.Duration
	cpu       float64
	peak      int64
	wantInRow bool // ended in the queried range
}

// The usage report sums requested vs used over the attempts that ended in
// the range and were measured, and says how many were; an unmeasured
// attempt is counted as ended but adds nothing to either side. The
// expected values are computed here from the attempts' own numbers, and
// the rows reconcile with the charge lines' joined usage (ChargeUsage),
// as an auditor would check them against the ledger export.
func TestUsageReportComparesRequestedWithMeasured(t *testing.T) {
	h := newHarness(t)
	gangSetup(h, 1000)
	h.ok(&CreateUser{Name: "bob", Accounts: []string{"phys"}})
	const mib = 1 << 20
	attempts := []measuredAttempt{
		{job: 1, user: "ann", nodes: []string{"n1"}, cores: 4, mem: 64 * mib, runtime: 30 * time.Minute, endAt: 30 * time.Minute, cpu: 5400, peak: 50 * mib, wantInRow: true},
		// An unconfined node's attempt: ended and charged, not measured.
		{job: 2, user: "ann", nodes: []string{"n1"}, cores: 2, mem: 64 * mib, runtime: 30 * time.Minute, endAt: 30 * time.Minute, wantInRow: true},
		{job: 3, user: "bob", nodes: []string{"n2"}, cores: 2, mem: 256 * mib, runtime: time.Hour, endAt: time.Hour, cpu: 1800, peak: 200 * mib, wantInRow: true},
		// A parallel task: the head measures its own node's share.
		{job: 4, user: "ann", nodes: []string{"n3", "n4"}, cores: 8, mem: 1 << 30, runtime: time.Hour, endAt: time.Hour, cpu: 7200, peak: 900 * mib, wantInRow: true},
		// Ends after the range: its measurement belongs to a later report.
		{job: 5, user: "ann", nodes: []string{"n1"}, cores: 1, mem: 64 * mib, runtime: 3 * time.Hour, endAt: 3 * time.Hour, cpu: 9000, peak: 2000 * mib},
	}
	for _, a := range attempts {
		h.ok(&SubmitJob{Account: "phys", User: a.user, Demand: map[string]float64{"cpu": a.cores, "mem": a.mem}, Nodes: len(a.nodes),
			Tasks: 1, Walltime: 4 * time.Hour, Command: []string{"x"}})
		p := TaskPlacement{JobID: a.job, Task: 0, Node: a.nodes[0]}
		if len(a.nodes) > 1 {
			p.Nodes = a.nodes
		}
		if res := h.ok(&Assign{Placements: []TaskPlacement{p}}).(*AssignResult); len(res.Accepted) != 1 {
			t.Fatalf("job %d not placed: %+v", a.job, res.Dropped)
		}
	}
	for _, end := range []time.Duration{30 * time.Minute, time.Hour, 3 * time.Hour} {
		h.at(end)
		var events []TaskEvent
		for _, a := range attempts {
			if a.endAt == end {
				e := exited(a.job, 0, 1, 0, a.runtime)
				e.CPUSeconds, e.PeakMemBytes = a.cpu, a.peak
				events = append(events, e)
			}
		}
		h.ok(&TaskEvents{Events: events})
	}

	// What each row should hold, from the attempts' own numbers.
	type sums struct {
		ended, measured   int64
		alloc, used       float64
		peak, peakRequest int64
	}
	want := map[string]*sums{}
	for _, a := range attempts {
		if !a.wantInRow {
			continue
		}
		for _, key := range []string{"phys", a.user} {
			s := want[key]
			if s == nil {
				s = &sums{}
				want[key] = s
			}
			s.ended++
			if a.cpu == 0 && a.peak == 0 {
				continue
			}
			s.measured++
			s.alloc += a.cores * a.runtime.Seconds()
			s.used += a.cpu
			if a.peak > s.peak {
				s.peak, s.peakRequest = a.peak, int64(a.mem)
			}
		}
	}
	from, to := t0, t0.Add(2*time.Hour)
	for _, byUser := range []bool{false, true} {
		rows, err := h.f.Usage(UsageQuery{From: from, To: to, ByUser: byUser, Now: h.now})
		if err != nil {
			t.Fatal(err)
		}
		wantRows := 1
		if byUser {
			wantRows = 2
		}
		if len(rows) != wantRows {
			t.Fatalf("by user %v: %d rows, want %d: %+v", byUser, len(rows), wantRows, rows)
		}
		for _, r := range rows {
			w := want[r.Key]
			if w == nil {
				t.Fatalf("unexpected row %q", r.Key)
			}
			if r.Ended != w.ended || r.Measured != w.measured || !near(r.CPUAllocated, w.alloc) || !near(r.CPUUsed, w.used) ||
				r.PeakMemBytes != w.peak || r.PeakMemRequested != w.peakRequest {
				t.Errorf("row %s = ended %d measured %d cpu %v of %v peak %d of %d; want ended %d measured %d cpu %v of %v peak %d of %d",
					r.Key, r.Ended, r.Measured, r.CPUUsed, r.CPUAllocated, r.PeakMemBytes, r.PeakMemRequested,
					w.ended, w.measured, w.used, w.alloc, w.peak, w.peakRequest)
			}
			if !near(r.CPUUsed/r.CPUAllocated, w.used/w.alloc) {
				t.Errorf("row %s: efficiency %v, want %v", r.Key, r.CPUUsed/r.CPUAllocated, w.used/w.alloc)
			}
		}
	}

	// Reconciliation: the charge lines of the range, joined with their
	// attempts' usage, add up to the account's row.
	var ids []string
	entries, _, err := h.f.Journal("phys", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var charges []ledger.JournalEntry
	for _, e := range entries {
		if e.Kind == ledger.EntryCharge {
			ids = append(ids, e.ID)
			charges = append(charges, e)
		}
	}
	joined, err := h.f.ChargeUsage(append(ids, "job-1.task-00.attempt-1", "grant-7"))
	if err != nil {
		t.Fatal(err)
	}
	if len(joined) != len(attempts) {
		t.Fatalf("joined %d charges, want %d (one per attempt, none for ids that name no attempt): %v", len(joined), len(attempts), joined)
	}
	var lines sums
	for _, e := range charges {
		if e.Time < from || e.Time >= to {
			continue
		}
		u := joined[e.ID]
		lines.ended++
		if !u.Measured {
			if u != (AttemptUsage{}) {
				t.Errorf("unmeasured charge %s carries %+v", e.ID, u)
			}
			continue
		}
		lines.measured++
		lines.alloc += u.CPUAllocated
		lines.used += u.CPUSeconds
		if u.PeakMemBytes > lines.peak {
			lines.peak, lines.peakRequest = u.PeakMemBytes, u.MemRequested
		}
	}
	if w := want["phys"]; lines.ended != w.ended || lines.measured != w.measured || !near(lines.alloc, w.alloc) || !near(lines.used, w.used) ||
		lines.peak != w.peak || lines.peakRequest != w.peakRequest {
		t.Errorf("charge lines add up to %+v, the report's row is %+v", lines, *w)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
