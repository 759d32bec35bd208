package fsm

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

const su = ledger.MicroPerSU

// charges returns the journal's charge entries.
func charges(h *harness) []ledger.JournalEntry {
	var out []ledger.JournalEntry
	entries, _, err := h.f.Journal("", 0, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range entries {
		if e.Kind == ledger.EntryCharge {
			out = append(out, e)
		}
	}
	return out
}

func exited(job uint64, task int64, attempt int, code int32, runtime time.Duration) TaskEvent {
	return TaskEvent{JobID: job, Task: task, Attempt: attempt, Kind: TaskExited, ExitCode: code, Runtime: runtime}
}

func balance(t testing.TB, h *harness) ledger.Balance {
	t.Helper()
	b, err := h.f.Balance("phys", h.now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A task's exit reported twice — in one command, in a later one, and after
// a lost report — is charged exactly once.
func TestDuplicateExitNeverChargesTwice(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(30 * time.Minute)
	ev := exited(1, 0, 1, 0, 30*time.Minute)
	res := h.ok(&TaskEvents{Events: []TaskEvent{ev, ev}}).(*EventsResult)
	if res.Applied != 1 || len(res.Ignored) != 1 {
		t.Fatalf("duplicate in one batch: %+v", res)
	}
	for _, again := range []TaskEvent{ev, {JobID: 1, Task: 0, Attempt: 1, Kind: TaskLost}, exited(1, 0, 1, 0, time.Hour)} {
		h.at(40 * time.Minute)
		if r := h.ok(&TaskEvents{Events: []TaskEvent{again}}).(*EventsResult); r.Applied != 0 {
			t.Fatalf("a report for an ended attempt was applied: %+v", again)
		}
	}
	// The very same log entry delivered twice (raft re-sends it after a
	// restart): skipped by index.
	last := h.log.entries[len(h.log.entries)-1]
	if resp := h.f.Apply(last); resp != nil {
		t.Fatalf("an entry at an applied index was applied again: %#v", resp)
	}
	// 4 cpu × 0.5 h × 1 SU per core-hour.
	cs := charges(h)
	if len(cs) != 1 || cs[0].Amount != 2*su {
		t.Fatalf("charges = %+v, want one of 2 SU", cs)
	}
	if b := balance(t, h); b.Charged != 2*su {
		t.Fatalf("charged %v, want 2 SU", b.Charged)
	}
}

// The hold covers the worst case; each task is charged its runtime clamped
// to the walltime; the rest of the hold is released when the job ends.
func TestJobChargesAndRelease(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	j := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2, "mem": 4 << 30}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	if j.Hold != 6*su { // 3 tasks × 2 cpu × 1 h
		t.Fatalf("hold = %v, want 6 SU", j.Hold)
	}
	if b := balance(t, h); b.Held != 6*su || b.Available != 94*su {
		t.Fatalf("balance after submit = %+v", b)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1"}}})
	h.at(2 * time.Hour)
	h.ok(&TaskEvents{Events: []TaskEvent{
		exited(1, 0, 1, 0, 30*time.Minute),
		exited(1, 1, 1, 0, 5*time.Hour),  // clamped to the walltime
		exited(1, 2, 1, 1, -time.Minute), // clamped to zero
	}})
	got, err := h.f.Job(1)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != JobFailed || got.Succeeded != 2 || got.Failed != 1 || got.Charged != 3*su {
		t.Fatalf("job after its tasks ended = %+v", got)
	}
	b := balance(t, h)
	if b.Held != 0 || b.Charged != 3*su || b.Available != 97*su {
		t.Fatalf("balance after the job ended = %+v (the rest of the hold must be released)", b)
	}
	tasks, _, err := h.f.Tasks(1, 0, 0)
	if err != nil || len(tasks) != 3 || tasks[1].Runtime != time.Hour || tasks[2].Runtime != 0 || tasks[2].State != TaskFailed {
		t.Fatalf("tasks = %+v, %v", tasks, err)
	}
	if _, err := h.f.Verify(); err != nil {
		t.Fatal(err)
	}
}

// A node going down loses its tasks: each is charged up to the failure and
// requeued until it has used its attempts, then the job fails.
func TestNodeDownRequeuesUntilAttemptsRunOut(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}, MaxAttempts: 2})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.at(6 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	h.at(18 * time.Minute)
	if r := h.ok(&NodeDown{ID: "n1", Reason: "power"}).(*NodeResult); r.Lost != 1 || r.Node.Up {
		t.Fatalf("node down = %+v", r)
	}
	j, _ := h.f.Job(1)
	if j.Pending != 1 || j.Running != 0 || j.State.Ended() {
		t.Fatalf("after the first loss the task must wait for attempt 2: %+v", j)
	}
	// Charged from the reported start (6 min) to the failure (18 min).
	if b := balance(t, h); b.Charged != su/5 {
		t.Fatalf("charged %v after the loss, want 0.2 SU", b.Charged)
	}
	// The requeued task is offered to the scheduler, as task 0.
	if v := h.f.View(h.now); len(v.Nodes) != 0 || len(v.Accounts[0].Queue) != 1 || v.Accounts[0].Queue[0].FirstIndex != 0 {
		t.Fatalf("view after the loss = %+v", v)
	}
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	placed := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}}).(*AssignResult)
	if len(placed.Accepted) != 1 || placed.Accepted[0].Attempt != 2 {
		t.Fatalf("re-placement = %+v, want attempt 2", placed)
	}
	h.at(48 * time.Minute) // assigned at 18 min, never reported started
	h.ok(&NodeDown{ID: "n1"})
	j, _ = h.f.Job(1)
	if j.State != JobFailed || j.Failed != 1 {
		t.Fatalf("after the last attempt is lost the job fails: %+v", j)
	}
	if b := balance(t, h); b.Charged != su/5+su/2 || b.Held != 0 {
		t.Fatalf("balance = %+v, want 0.7 SU charged and nothing held", b)
	}
}

// Cancelling drops the pending tasks at once; running ones end normally and
// the job is cancelled when the last one has.
func TestCancel(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 10, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	j := h.ok(&CancelJob{JobID: 1}).(JobInfo)
	if j.Cancelled != 9 || j.Running != 1 || j.State.Ended() {
		t.Fatalf("after cancel = %+v", j)
	}
	if again := h.ok(&CancelJob{JobID: 1}).(JobInfo); again.Cancelled != 9 {
		t.Fatalf("cancelling twice changed the job: %+v", again)
	}
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 1, Node: "n1"}}}).(*AssignResult); len(r.Accepted) != 0 {
		t.Fatal("a cancelled job's task was placed")
	}
	h.at(time.Hour)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 12*time.Minute)}})
	j, _ = h.f.Job(1)
	if j.State != JobCancelled || j.Succeeded != 1 {
		t.Fatalf("job = %+v", j)
	}
	if b := balance(t, h); b.Held != 0 || b.Charged != su/5 {
		t.Fatalf("balance = %+v", b)
	}
}

// Assign re-checks every placement against the state it is applied to:
// stale ones are dropped with a reason, the rest applied.
func TestAssignDropsStalePlacements(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 4}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 3}, Tasks: 5, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"y"}})
	h.ok(&CancelJob{JobID: 2})
	h.ok(&NodeDown{ID: "n2"})
	r := h.ok(&Assign{Placements: []TaskPlacement{
		{JobID: 1, Task: 0, Node: "n1"}, // ok
		{JobID: 1, Task: 0, Node: "n1"}, // placed just above
		{JobID: 1, Task: 2, Node: "n1"}, // skips task 1
		{JobID: 1, Task: 1, Node: "n1"}, // ok
		{JobID: 1, Task: 2, Node: "n1"}, // does not fit: 6 of 8 cpu are taken
		{JobID: 1, Task: 2, Node: "n2"}, // node down
		{JobID: 1, Task: 2, Node: "n3"}, // node unknown
		{JobID: 2, Task: 0, Node: "n1"}, // job cancelled (and ended)
		{JobID: 9, Task: 0, Node: "n1"}, // no such job
	}}).(*AssignResult)
	if len(r.Accepted) != 2 || r.Accepted[0].Task != 0 || r.Accepted[1].Task != 1 || len(r.Dropped) != 7 {
		t.Fatalf("assign = %+v", r)
	}
	if n := h.f.Nodes(); n[0].Free["cpu"] != 2 || n[0].Running != 2 {
		t.Fatalf("node n1 = %+v", n[0])
	}
	if run := h.f.Running("n1"); len(run) != 2 || run[0].Task != 0 || run[1].Task != 1 || run[0].State != TaskAssigned {
		t.Fatalf("running on n1 = %+v", run)
	}
	if run := h.f.Running("n2"); len(run) != 0 {
		t.Fatalf("running on the down node = %+v", run)
	}
}

// A million-task array is one record: no row per pending task.
func TestLargeArrayIsNotMaterialized(t *testing.T) {
	h := newHarness(t)
	h.setup(10_000_000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: MaxTasksPerJob, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	var taskRows, jobBytes int
	h.f.view(func(_ readSnap, tx *bolt.Tx) error {
		taskRows = tx.Bucket(bucketTasks).Stats().KeyN
		jobBytes = len(tx.Bucket(bucketJobs).Get(jobKey(1)))
		return nil
	})
	if taskRows != 2 || jobBytes > 1024 {
		t.Fatalf("%d task rows and a %d-byte job record for a 1,000,000-task array", taskRows, jobBytes)
	}
	if j, _ := h.f.Job(1); j.Pending != MaxTasksPerJob-2 {
		t.Fatalf("pending = %d", j.Pending)
	}
}

// The same request id submits once; the same grant id grants once.
func TestIdempotentSubmitAndGrant(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	sub := &SubmitJob{RequestID: "abc", Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}}
	a := h.ok(sub).(JobInfo)
	b := h.ok(sub).(JobInfo)
	if a.ID != b.ID || balance(t, h).Held != 2*su {
		t.Fatalf("resubmission made job %d then %d, held %v", a.ID, b.ID, balance(t, h).Held)
	}
	g := &Grant{ID: "top-up", Account: "phys", Amount: 5 * su}
	h.ok(g)
	h.ok(g)
	if bal := balance(t, h); bal.Granted != 105*su {
		t.Fatalf("granted %v, want 105 SU", bal.Granted)
	}
	g1 := h.ok(&Grant{Account: "phys", Amount: su}).(GrantInfo)
	g2 := h.ok(&Grant{Account: "phys", Amount: su}).(GrantInfo)
	if g1.ID == g2.ID || g1.ID == "" {
		t.Fatalf("generated grant ids %q and %q", g1.ID, g2.ID)
	}
	if _, err := h.f.Verify(); err != nil {
		t.Fatal(err)
	}
}

// The leader's clock may step back (a new leader); the FSM's time never does.
func TestTimeNeverGoesBack(t *testing.T) {
	h := newHarness(t)
	h.at(time.Hour)
	h.ok(&CreateAccount{Name: "a"})
	h.at(0)
	r := h.apply(&CreateAccount{Name: "b"})
	if r.Time != t0.Add(time.Hour) {
		t.Fatalf("time %d, want %d", r.Time, t0.Add(time.Hour))
	}
	if info, _ := h.f.Account("b"); info.CreatedAt != t0.Add(time.Hour) {
		t.Fatalf("created at %d", info.CreatedAt)
	}
}

// A resource added later extends every vector; history is kept.
func TestAddResource(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.at(10 * time.Minute)
	s := h.ok(&UpdateSettings{AddResources: []string{"gpu"}, BillingWeights: map[string]float64{"cpu": 1, "gpu": 10}}).(SettingsInfo)
	if len(s.Resources) != 4 || s.BillingWeights["gpu"] != 10 {
		t.Fatalf("settings = %+v", s)
	}
	h.ok(&NodeUp{ID: "g1", Capacity: map[string]float64{"cpu": 8, "gpu": 2}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"gpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "g1"}}})
	h.at(20 * time.Minute)
	r, err := h.f.Fairness("phys", h.now)
	if err != nil {
		t.Fatal(err)
	}
	// cpu: 1 core for 20 minutes; gpu: 1 device for 10 minutes.
	if u := r.Accounts[0].Usage; u["cpu"] != 1200 || u["gpu"] != 600 {
		t.Fatalf("usage = %v", u)
	}
	// Survives a restart: stored vectors are shorter than the list and padded.
	h.f.Close()
	f := openFSM(t, h.dir)
	r2, _ := f.Fairness("phys", h.now)
	if r2.Accounts[0].Usage["gpu"] != 600 {
		t.Fatalf("after restart usage = %v", r2.Accounts[0].Usage)
	}
}

// The store failing makes the FSM refuse everything rather than diverge.
func TestBrokenStoreRefuses(t *testing.T) {
	h := newHarness(t)
	h.f.db.Close() // the disk went away under the FSM
	r := h.apply(&CreateAccount{Name: "a"})
	if KindOf(r.Err) != KindUnavailable || h.f.Err() == nil {
		t.Fatalf("result %+v, Err() = %v", r, h.f.Err())
	}
	if !bytes.Contains([]byte(r.Err.Error()), []byte("restart")) {
		t.Fatalf("message %q does not say to restart", r.Err)
	}
}

// Changing the window starts the fairness history again from the change,
// running tasks included, and their ends are counted from there.
func TestWindowChangeRestartsFairness(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 2, Walltime: 5 * time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.at(time.Hour)
	h.ok(&UpdateSettings{Window: strp("sliding:10h")})
	h.at(90 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 90*time.Minute)}})
	h.at(2 * time.Hour)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 1, 1, 0, 2*time.Hour)}})
	r, _ := h.f.Fairness("phys", h.now)
	// Both tasks count from the change: 2 cpu × 30 min and 2 cpu × 60 min.
	if got := r.Accounts[0].Usage["cpu"]; got != 2*1800+2*3600 {
		t.Fatalf("usage after the window change = %v, want %v", got, 2*1800+2*3600)
	}
	if r.Window != (ledger.Window{Kind: ledger.WindowSliding, Length: 10 * time.Hour}) {
		t.Fatalf("window = %v", r.Window)
	}
	// The restarted book survives a restart.
	h.f.Close()
	f := openFSM(t, h.dir)
	if r2, _ := f.Fairness("phys", h.now); r2.Accounts[0].Usage["cpu"] != r.Accounts[0].Usage["cpu"] {
		t.Fatalf("after restart usage = %v", r2.Accounts[0].Usage)
	}
}

// Entries raft still delivers after Close are refused, not a crash.
func TestApplyAfterClose(t *testing.T) {
	h := newHarness(t)
	h.f.Close()
	if r := h.apply(&CreateAccount{Name: "a"}); KindOf(r.Err) != KindUnavailable {
		t.Fatalf("apply after close: %+v", r)
	}
}

// A command that panics (a bug) is refused on every server alike; the rest
// of its batch applies and the FSM keeps going.
func TestPanickingCommandIsRefused(t *testing.T) {
	boom := func(c Command) {
		if a, ok := c.(*CreateAccount); ok && a.Name == "boom" {
			panic("injected bug")
		}
	}
	l := &log{}
	for _, name := range []string{"a", "boom", "b"} {
		l.add(t, t0, &CreateAccount{Name: name})
	}
	var digests [][32]byte
	for range 2 {
		f := openFSM(t, t.TempDir())
		f.hook = boom
		out := f.ApplyBatch(l.entries)
		if out[0].(*Result).Err != nil || out[2].(*Result).Err != nil || KindOf(out[1].(*Result).Err) != KindInternal {
			t.Fatalf("results %+v %+v %+v", out[0], out[1], out[2])
		}
		if _, err := f.Account("boom"); err == nil {
			t.Fatal("the panicking command left its account behind")
		}
		if _, err := f.Account("b"); err != nil || f.Err() != nil {
			t.Fatalf("the batch did not go on after the panic: %v, %v", err, f.Err())
		}
		digests = append(digests, digestOf(t, f))
	}
	if digests[0] != digests[1] {
		t.Fatal("servers disagree after a panicking command")
	}
}

// A charge the SU cannot express (weights raised after submission) bills
// the rest of the hold instead of stopping the FSM.
func TestOverflowingChargeBillsTheHold(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&UpdateSettings{BillingWeights: map[string]float64{"cpu": 1e-9}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1e12}, Tasks: 1, Walltime: time.Minute, Command: []string{"x"}})
	h.ok(&NodeUp{ID: "big", Capacity: map[string]float64{"cpu": 1e12}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "big"}}})
	h.ok(&UpdateSettings{BillingWeights: map[string]float64{"cpu": 1e18}})
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Minute)}})
	j, _ := h.f.Job(1)
	if h.f.Err() != nil || j.State != JobSucceeded || j.Hold == 0 || j.Charged != j.Hold {
		t.Fatalf("job %+v, err %v", j, h.f.Err())
	}
	if _, err := h.f.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestSUBookReadsCommittedEntriesFromTheStateFile: the FSM's SU book lets
// go of the journal entries each commit stored, and a retry of one (here a
// charge, which the FSM itself never repeats) is answered from the state
// file with the entry as written, before and after a reopen.
func TestSUBookReadsCommittedEntriesFromTheStateFile(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}}})
	h.at(30 * time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 30*time.Minute)}})
	cs := charges(h)
	if len(cs) != 1 {
		t.Fatalf("charges = %+v, want one", cs)
	}
	want := cs[0]
	retry := func() {
		t.Helper()
		h.f.mu.Lock()
		defer h.f.mu.Unlock()
		n := h.f.st.su.Len()
		got, err := h.f.st.su.Charge(want.HoldID, want.ID, want.Requested, want.Detail, h.now)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("a retried charge answered %+v, %v; want the stored entry %+v", got, err, want)
		}
		if h.f.st.su.Len() != n {
			t.Fatal("a retried charge wrote an entry")
		}
	}
	retry()
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(Options{Dir: h.dir, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	h.f = f
	t.Cleanup(func() { f.Close() })
	retry()
}

// A start its worker held back, to send it with the task's end, is dated
// by how long the task had run when it was sent, never before the task
// was placed; a look-ahead attempt's start is dated by its entry, since it
// takes its node's room then.
func TestHeldStartIsDatedByItsRuntime(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1", Queued: true}}})
	placed := h.now
	h.at(time.Minute)
	ran := func(task int64, d time.Duration) TaskEvent {
		return TaskEvent{JobID: 1, Task: task, Attempt: 1, Kind: TaskStarted, Runtime: d}
	}
	h.ok(&TaskEvents{Events: []TaskEvent{ran(0, 20*time.Second), ran(1, 5*time.Minute), ran(2, 30*time.Second)}})
	tasks, _, err := h.f.Tasks(1, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []ledger.Time{h.now.Add(-20 * time.Second), placed, h.now} {
		if got := tasks[i].StartedAt; got != want {
			t.Errorf("task %d started at %v, want %v", i, got, want)
		}
	}
}
