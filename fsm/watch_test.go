package fsm

import (
	"testing"
	"time"
)

// A watcher is signalled once per committed batch with the types applied,
// tokens coalesce, and a closed watcher hears nothing more.
func TestWatcherSeesAppliedCommandTypes(t *testing.T) {
	h := newHarness(t)
	w := h.f.Watch()
	h.setup(100)
	select {
	case <-w.C():
	default:
		t.Fatal("no token after four applied commands")
	}
	select {
	case <-w.C():
		t.Fatal("tokens queued up instead of coalescing")
	default:
	}
	c := w.Take()
	for _, typ := range []CommandType{TypeCreateAccount, TypeCreateUser, TypeGrant, TypeNodeUp} {
		if !c.Has(typ) {
			t.Errorf("changes %b lack %s", c, typ)
		}
	}
	if c.Has(TypeSubmitJob) || c.Has(TypeCancelJob) {
		t.Errorf("changes %b name commands that were not applied", c)
	}
	if again := w.Take(); again != 0 {
		t.Fatalf("Take did not forget: %b", again)
	}
	// A refused command still counts: it was applied (as a refusal).
	h.apply(&CancelJob{JobID: 42})
	if !w.Take().Has(TypeCancelJob) {
		t.Fatal("refused cancel not reported")
	}
	w.Close()
	select { // drain the cancel's token
	case <-w.C():
	default:
	}
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	select {
	case <-w.C():
		t.Fatal("a closed watcher was signalled")
	default:
	}
}

// Cancelling a job whose tasks all run: the workers kill them, they exit
// non-zero, and the job ends cancelled, not failed; each is charged for the
// time it ran.
func TestCancelledRunningTasksEndCancelled(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.ok(&CancelJob{JobID: 1})
	h.at(time.Hour)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 143, 6*time.Minute), exited(1, 1, 1, 137, 12*time.Minute)}})
	j, err := h.f.Job(1)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != JobCancelled || j.Cancelled != 2 || j.Failed != 0 {
		t.Fatalf("job = %+v, want cancelled with 2 cancelled tasks", j)
	}
	if b := balance(t, h); b.Held != 0 || b.Charged != su/10+su/5 {
		t.Fatalf("balance = %+v, want 0.3 SU charged", b)
	}
}
