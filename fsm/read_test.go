package fsm

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// One account alone, with the whole cluster as its share: its baseline is
// what it runs, so β = 1, and Ü is demand × time.
func TestFairnessReportAlone(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2, "mem": 8 << 30}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(10 * time.Minute)
	r, err := h.f.Fairness("", h.now)
	if err != nil {
		t.Fatal(err)
	}
	row := r.Accounts[0]
	if row.Usage["cpu"] != 2*2*600 || row.Usage["mem"] != 2*8*600<<30 {
		t.Fatalf("usage %v, want cpu 2400, mem 9600 GiB·s", row.Usage)
	}
	if !row.HasBeta || math.Abs(row.Beta-1) > 1e-12 {
		t.Fatalf("β = %v (has %v), want 1", row.Beta, row.HasBeta)
	}
	if row.Running != 2 || row.Pending != 0 || row.Allocation["cpu"] != 4 || row.Available != 96*su {
		t.Fatalf("row = %+v", row)
	}
	if row.Share["cpu"] != 8 || r.Capacity["cpu"] != 8 {
		t.Fatalf("share %v capacity %v: one account alone owns the cluster", row.Share, r.Capacity)
	}
}

// Two equal accounts; A runs on the whole cluster while B waits: A's
// usage is twice its baseline (it borrowed B's half), B has baseline but no
// usage (β = 0, a sharing loss the policies will pay back).
func TestFairnessReportSharingLoss(t *testing.T) {
	h := newHarness(t)
	h.ok(&CreateAccount{Name: "a", Weight: f64(1)})
	h.ok(&CreateAccount{Name: "b", Weight: f64(1)})
	h.ok(&CreateUser{Name: "u", Accounts: []string{"a", "b"}})
	for _, acct := range []string{"a", "b"} {
		h.ok(&Grant{Account: acct, Amount: 1000 * su})
	}
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 4}})
	h.ok(&SubmitJob{Account: "a", User: "u", Demand: map[string]float64{"cpu": 1}, Tasks: 4, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"}, {JobID: 1, Task: 3, Node: "n1"}}})
	h.ok(&SubmitJob{Account: "b", User: "u", Demand: map[string]float64{"cpu": 1}, Tasks: 4, Walltime: time.Hour, Command: []string{"x"}})
	h.at(100 * time.Second)
	r, _ := h.f.Fairness("", h.now)
	a, b := r.Accounts[0], r.Accounts[1]
	if a.Usage["cpu"] != 400 || a.Baseline["cpu"] != 200 || a.Beta != 2 {
		t.Fatalf("a: usage %v baseline %v β %v; want 400, 200, 2", a.Usage, a.Baseline, a.Beta)
	}
	if b.Usage["cpu"] != 0 || b.Baseline["cpu"] != 200 || b.Beta != 0 || b.Waiting != 100*time.Second {
		t.Fatalf("b: usage %v baseline %v β %v waiting %v", b.Usage, b.Baseline, b.Beta, b.Waiting)
	}
	// The scheduler's view says the same.
	v := h.f.View(h.now)
	if v.Accounts[1].Baseline[0] != 200 || v.Accounts[1].BaselineRate[0] != 2 || v.Accounts[0].Running[0] != 4 {
		t.Fatalf("view = %+v", v.Accounts)
	}
}

// The real engine schedules on the View, and every placement it makes is
// accepted when proposed back through AssignFor.
func TestViewRoundTripThroughEngine(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 4, "mem": 16 << 30, "mic": 1}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1, "mem": 2 << 30}, Tasks: 50, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1, "mic": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	v := h.f.View(h.now)
	ps, err := sched.NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := AssignFor(v, ps)
	if err != nil {
		t.Fatal(err)
	}
	r := h.ok(cmd).(*AssignResult)
	if len(r.Dropped) != 0 || len(r.Accepted) != 12 {
		t.Fatalf("assign = %d accepted, %+v dropped; want 12 accepted (8+4 cpu)", len(r.Accepted), r.Dropped)
	}
	for _, n := range h.f.Nodes() {
		if n.Free["cpu"] != 0 {
			t.Fatalf("node %s has %v cpu free after a work-conserving pass", n.ID, n.Free["cpu"])
		}
	}
	if _, err := AssignFor(v, []sched.Placement{{Account: 5}}); err == nil {
		t.Fatal("a placement outside the view was mapped")
	}
}

// Usage by account and by user over a range, clipped to it.
func TestUsageReport(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&CreateUser{Name: "bob", Accounts: []string{"phys"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 1, Walltime: 2 * time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "bob", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: 2 * time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1"}}})
	h.at(time.Hour)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Hour)}})
	h.at(90 * time.Minute) // bob's task still runs

	byUser, err := h.f.Usage(UsageQuery{From: t0.Add(30 * time.Minute), To: t0.Add(2 * time.Hour), ByUser: true, Now: h.now})
	if err != nil {
		t.Fatal(err)
	}
	// ann: 2 cpu from 30 to 60 min = 3600 cpu-s, charged 2 SU (ended in range);
	// bob: 1 cpu from 30 to 90 min (now) = 3600 cpu-s, nothing charged yet.
	if len(byUser) != 2 || byUser[0].Key != "ann" || byUser[0].Usage["cpu"] != 3600 || byUser[0].Charged != 2*su ||
		byUser[1].Key != "bob" || byUser[1].Usage["cpu"] != 3600 || byUser[1].Charged != 0 || byUser[1].Runtime != time.Hour {
		t.Fatalf("by user = %+v", byUser)
	}
	byAccount, _ := h.f.Usage(UsageQuery{From: t0, To: t0.Add(2 * time.Hour), Now: h.now})
	if len(byAccount) != 1 || byAccount[0].Usage["cpu"] != 2*3600+5400 || byAccount[0].Attempts != 2 {
		t.Fatalf("by account = %+v", byAccount)
	}
	if _, err := h.f.Usage(UsageQuery{From: t0, To: t0}); KindOf(err) != KindInvalid {
		t.Fatalf("empty range: %v", err)
	}
}

// A report cut into periods counts each attempt in every period it ran
// in, clipped to it, and its charge in the period it ended in: the
// periods add up to the report of the whole range.
func TestUsageReportByPeriod(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 2, Walltime: 2 * time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(90 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 90*time.Minute)}})
	h.at(100 * time.Minute) // task 1 still runs
	whole, err := h.f.Usage(UsageQuery{From: t0, To: t0.Add(2 * time.Hour), Now: h.now})
	if err != nil || len(whole) != 1 {
		t.Fatalf("whole range: %+v, %v", whole, err)
	}
	cuts := []ledger.Time{t0.Add(time.Hour), t0.Add(90 * time.Minute)}
	per, err := h.f.Usage(UsageQuery{From: t0, To: t0.Add(2 * time.Hour), Now: h.now, Split: cuts})
	if err != nil || len(per) != 3 {
		t.Fatalf("by period: %+v, %v", per, err)
	}
	// [0,60): both run 60 min; [60,90): both 30 min; [90,120): task 1 runs
	// 10 min to now, and task 0's end at 90 min falls here.
	wantCPU := []float64{2 * 2 * 3600, 2 * 2 * 1800, 2 * 600}
	var sumCPU float64
	var sumCharged ledger.SU
	for i, r := range per {
		if r.Period != append([]ledger.Time{t0}, cuts...)[i] || r.Usage["cpu"] != wantCPU[i] {
			t.Errorf("period %d: %+v; want it to start at its cut with %v cpu-s", i, r, wantCPU[i])
		}
		sumCPU += r.Usage["cpu"]
		sumCharged += r.Charged
	}
	if per[0].Charged != 0 || per[1].Charged != 0 || per[2].Charged != whole[0].Charged || per[2].Ended != 1 || per[2].Attempts != 2 {
		t.Errorf("the charge of the task that ended at 90 min: %+v", per)
	}
	if sumCPU != whole[0].Usage["cpu"] || sumCharged != whole[0].Charged {
		t.Errorf("periods sum to %v cpu-s and %v SU, the whole range to %v and %v", sumCPU, sumCharged, whole[0].Usage["cpu"], whole[0].Charged)
	}
	for _, bad := range [][]ledger.Time{{t0}, {t0.Add(time.Hour), t0.Add(time.Hour)}, {t0.Add(3 * time.Hour)}} {
		if _, err := h.f.Usage(UsageQuery{From: t0, To: t0.Add(2 * time.Hour), Split: bad}); KindOf(err) != KindInvalid {
			t.Errorf("cuts %v: %v, want refused", bad, err)
		}
	}
}

// Lists page through everything exactly once.
func TestPaging(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	for range 7 {
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	}
	h.ok(&CancelJob{JobID: 3})
	var ids []uint64
	for before := uint64(0); ; {
		page, next, err := h.f.Jobs(JobFilter{Account: "phys", Before: before, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page {
			ids = append(ids, j.ID)
		}
		if next == 0 {
			break
		}
		before = next
	}
	if len(ids) != 7 || ids[0] != 7 || ids[6] != 1 {
		t.Fatalf("paged ids = %v, want 7…1", ids)
	}
	cancelled, _, _ := h.f.Jobs(JobFilter{User: "ann", States: []JobState{JobCancelled}})
	if len(cancelled) != 1 || cancelled[0].ID != 3 {
		t.Fatalf("cancelled = %+v", cancelled)
	}
	var seqs []uint64
	for after := uint64(0); ; {
		page, next, err := h.f.Journal("phys", after, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			seqs = append(seqs, e.Seq)
		}
		if next == 0 {
			break
		}
		after = next
	}
	if len(seqs) != 9 || seqs[8] != 9 { // grant, 7 holds, 1 release
		t.Fatalf("journal seqs = %v", seqs)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"}}})
	var tasks []int64
	for from := int64(0); ; {
		page, next, err := h.f.Tasks(1, from, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range page {
			tasks = append(tasks, tk.Task)
		}
		if next == 0 {
			break
		}
		from = next
	}
	if len(tasks) != 3 || tasks[2] != 2 {
		t.Fatalf("tasks = %v", tasks)
	}
}

// Readers run while raft applies: the race detector checks the locking,
// and every read sees a consistent state.
func TestConcurrentReads(t *testing.T) {
	w := newWorkload(t, 31)
	h := w.h
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				now := h.f.Now()
				v := h.f.View(now)
				if _, err := sched.NewEngine().Schedule(v); err != nil {
					t.Errorf("view is not schedulable: %v", err)
					return
				}
				if _, _, err := h.f.Jobs(JobFilter{Limit: 5}); err != nil {
					t.Error(err)
					return
				}
				if _, err := h.f.Fairness("", now); err != nil {
					t.Error(err)
					return
				}
				if _, err := h.f.Verify(); err != nil {
					t.Errorf("journal does not verify mid-run: %v", err)
					return
				}
				h.f.Balance("acct1", now)
				h.f.Nodes()
			}
		}()
	}
	// Snapshots run concurrently with applies too.
	for i := range 150 {
		w.step()
		if i%50 == 0 {
			s, err := h.f.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			go func() { s.Persist(&memSink{}); s.Release() }()
		}
	}
	close(stop)
	wg.Wait()
}
