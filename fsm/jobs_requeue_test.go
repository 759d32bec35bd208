package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// taskCost is what a task of job 1 (depJob: one core) costs for runtime,
// priced as every charge is.
func taskCost(t *testing.T, h *harness, runtime time.Duration) ledger.SU {
	t.Helper()
	set := h.f.st.settings
	j, err := h.f.Job(1)
	if err != nil {
		t.Fatal(err)
	}
	demand := ledger.NewVector(len(set.Resources))
	for i, r := range set.Resources {
		demand[i] = j.Demand[r]
	}
	c, err := ledger.Cost(runtime, demand, set.BillingWeights, set.BillingRule)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A requeued task is stopped, charged what it ran against a hold of its
// own, and runs again from the start with a new attempt, charged in full
// against the job's hold: nothing it ran is free, nothing is charged
// twice, and every hold is released when the job ends.
func TestRequeueRunsTheTaskAgainAndChargesBothRuns(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 1))
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	full := taskCost(t, h, time.Hour) // depJob's walltime
	before := balance(t, h)

	info := h.ok(&RequeueJob{JobID: 1}).(JobInfo)
	if info.Requeues != 1 || info.Running != 1 {
		t.Fatalf("after requeue: %+v; want 1 requeue with the task still running until its worker stops it", info)
	}
	if got := balance(t, h); got.Held != before.Held+full {
		t.Fatalf("held %v after requeue, want %v + one more run (%v)", got.Held, before.Held, full)
	}
	ti, err := h.f.Attempt(1, 0, 1)
	if err != nil || !ti.Requeue {
		t.Fatalf("attempt 1 after requeue: %+v, %v; want it marked", ti, err)
	}
	if err := h.apply(&RequeueJob{JobID: 1}).Err; err == nil || !strings.Contains(err.Error(), "already being requeued") {
		t.Fatalf("a second requeue while the first stops the task: %v", err)
	}

	// The worker stops it (SIGTERM: 143) after 10 minutes.
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 143, 10*time.Minute)}})
	if offeredTasks(h, 1) != 1 {
		t.Fatal("the requeued task is not offered again")
	}
	j, _ := h.f.Job(1)
	if j.State.Ended() || j.Failed != 0 || j.Pending != 1 {
		t.Fatalf("job after the requeued attempt ended: %+v", j)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	if ti, err := h.f.Attempt(1, 0, 2); err != nil || ti.Requeue {
		t.Fatalf("the rerun: %+v, %v; want attempt 2, unmarked", ti, err)
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 2, Kind: TaskStarted}, exited(1, 0, 2, 0, time.Hour)}})
	j, _ = h.f.Job(1)
	if j.State != JobSucceeded {
		t.Fatalf("job ended %v, want succeeded", j.State)
	}
	want := taskCost(t, h, 10*time.Minute) + full
	if j.Charged != want {
		t.Fatalf("charged %v, want %v (10 minutes, then the full hour)", j.Charged, want)
	}
	after := balance(t, h)
	if after.Held != 0 || after.Charged != before.Charged+want || after.Available != before.Available+before.Held-want {
		t.Fatalf("balance before %+v, after %+v; want every hold released and %v charged", before, after, want)
	}
	if _, err := h.f.Verify(); err != nil {
		t.Fatalf("ledger verify after a requeue: %v", err)
	}
}

// A requeue that cannot be done changes nothing: a job with nothing
// running, an ended one, and one whose account cannot cover the rerun.
func TestRequeueRefusalsChangeNothing(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(depJob("a", "", 1))
	check := func(want string) {
		t.Helper()
		d := stateDigest(t, h.f)
		if err := h.apply(&RequeueJob{JobID: 1}).Err; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("requeue: %v; want a refusal saying %q", err, want)
		}
		if stateDigest(t, h.f) != d {
			t.Fatal("the refused requeue changed the state")
		}
	}
	check("no running task")
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	// Spend the rest of the grant on a second job's hold.
	b := balance(t, h)
	big := depJob("big", "", 1)
	big.Walltime = time.Duration(float64(time.Hour) * float64(b.Available) / float64(taskCost(t, h, time.Hour)))
	h.ok(big)
	check("needs a hold of")
	h.ok(&CancelJob{JobID: 2})
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Minute)}})
	check("nothing to requeue")
	if _, err := Encode(h.now, &RequeueJob{}); err == nil {
		t.Fatal("a requeue of job 0 was accepted")
	}
}

// A task lost with its node runs again while it has attempts left. The
// lost attempt is charged what it ran against a hold of its own, so the
// job's hold, priced for one run of each task, is whole for the rerun,
// which is charged all it ran. An account that cannot fund that hold does
// not get the rerun: the task fails, saying why.
func TestLostAttemptsRerunIsPaidFor(t *testing.T) {
	cost := func(h *harness, d time.Duration) ledger.SU {
		t.Helper()
		c, err := ledger.Cost(d, h.f.st.jobs[1].allocation(), h.f.st.settings.BillingWeights, h.f.st.settings.BillingRule)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lose := func(h *harness) {
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}, MaxAttempts: 2})
		h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
		h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
		h.at(50 * time.Minute)
		h.ok(&NodeDown{ID: "n1"})
		h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	}

	t.Run("funded", func(t *testing.T) {
		h := newHarness(t)
		h.setup(1000)
		lose(h)
		want := []ledger.SU{cost(h, 50*time.Minute), cost(h, time.Hour)}
		if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}}).(*AssignResult); len(r.Accepted) != 1 || r.Accepted[0].Attempt != 2 {
			t.Fatalf("the lost task was not placed again: %+v", r)
		}
		h.at(2 * time.Hour)
		h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 2, 0, time.Hour)}})
		attempts, _, err := h.f.Attempts(1, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, ti := range attempts {
			if ti.Charged != want[i] {
				t.Errorf("attempt %d (%s, ran %v) was charged %v, want %v", ti.Attempt, ti.State, ti.Runtime, ti.Charged, want[i])
			}
		}
		if b := balance(t, h); b.Charged != want[0]+want[1] || b.Held != 0 {
			t.Errorf("after the job: %v SU charged and %v held, want %v and 0", b.Charged, b.Held, want[0]+want[1])
		}
	})

	t.Run("from the job's hold", func(t *testing.T) {
		// Task 0 ended early: what it left of the job's hold pays for task
		// 1's lost attempt and rerun, though the account has nothing free.
		probe := newHarness(t)
		probe.setup(1000)
		lose(probe)
		hour := cost(probe, time.Hour)
		h := newHarness(t)
		h.ok(&CreateAccount{Name: "phys"})
		h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
		h.ok(&Grant{ID: "g1", Account: "phys", Amount: 2 * hour})
		h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}, MaxAttempts: 2})
		h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
		h.at(10 * time.Minute)
		h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 10*time.Minute)}})
		h.at(30 * time.Minute)
		h.ok(&NodeDown{ID: "n1"})
		if j, _ := h.f.Job(1); j.Pending != 1 || j.Failed != 0 {
			t.Fatalf("job = %+v: want task 1 pending again", j)
		}
		h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
		h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 1, Node: "n1"}}})
		h.at(90 * time.Minute)
		h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 1, 2, 0, time.Hour)}})
		want := cost(probe, 10*time.Minute) + cost(probe, 30*time.Minute) + hour
		if b := balance(t, h); b.Charged != want || b.Held != 0 {
			t.Errorf("charged %v and held %v, want %v (all three runs) and 0", b.Charged, b.Held, want)
		}
	})

	t.Run("taken back from a queue", func(t *testing.T) {
		// A held job's queued attempt, which its worker had started: what
		// it ran is not taken from the hold its rerun needs.
		h := newHarness(t)
		h.setup(1000)
		h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
		h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1", Queued: true}}})
		h.ok(&HoldJob{JobID: 1, Hold: true})
		h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
		h.at(20 * time.Minute)
		h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 143, 20*time.Minute)}})
		h.ok(&HoldJob{JobID: 1})
		h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
		hour := cost(h, time.Hour)
		h.at(80 * time.Minute)
		h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 2, 0, time.Hour)}})
		attempts, _, err := h.f.Attempts(1, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 2 || attempts[1].Charged != hour {
			t.Fatalf("attempts %+v: want the rerun charged its whole hour, %v", attempts, hour)
		}
	})

	t.Run("unfunded", func(t *testing.T) {
		probe := newHarness(t)
		probe.setup(1000)
		lose(probe)
		hold, ran := cost(probe, time.Hour), cost(probe, 50*time.Minute)

		// Granted just the job's hold: nothing is left to hold for a rerun.
		h := newHarness(t)
		h.ok(&CreateAccount{Name: "phys"})
		h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
		h.ok(&Grant{ID: "g1", Account: "phys", Amount: hold})
		h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
		lose(h)
		if j, _ := h.f.Job(1); j.State != JobFailed || j.Pending != 0 {
			t.Fatalf("job = %+v: want it failed, its task not run again", j)
		}
		attempts, _, err := h.f.Attempts(1, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 1 || !strings.Contains(attempts[0].Reason, "not run again") {
			t.Fatalf("attempts %+v: want one, saying why its task does not run again", attempts)
		}
		if b := balance(t, h); b.Charged != ran || b.Held != 0 {
			t.Errorf("charged %v and held %v, want what the lost attempt ran (%v) and 0", b.Charged, b.Held, ran)
		}
	})
}
