package fsm

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	bolt "go.etcd.io/bbolt"
)

// A queued attempt holds nothing and is not counted by the fairness book
// until its start applies, but the room it will take is kept from
// ordinary placements; started, it is charged like any other attempt.
func TestQueuedAttemptHoldsNothingUntilItStarts(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	none := "none"
	h.ok(&UpdateSettings{Window: &none})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"y"}})
	r := h.ok(&Assign{Placements: []TaskPlacement{
		{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}, {JobID: 1, Task: 2, Node: "n1", Queued: true},
	}}).(*AssignResult)
	if len(r.Accepted) != 3 || !r.Accepted[2].Queued || r.Accepted[0].Queued {
		t.Fatalf("assign = %+v", r)
	}

	cpu := slices.Index(h.f.View(h.now).Resources, "cpu")
	v := h.f.View(h.now)
	if free, room := v.Nodes[0].Free[cpu], v.Nodes[0].QueueFree[cpu]; free != 0 || room != 4 {
		t.Fatalf("view of n1: free %v, queue room %v; want 0 and 4 (8 cpu less the queued 4)", free, room)
	}
	if held := v.Accounts[0].Running[cpu]; held != 8 {
		t.Fatalf("the policy sees %v cpu held by phys, want 8: a queued task counts once it starts", held)
	}
	start := TaskEvent{JobID: 1, Task: 2, Attempt: 1, Kind: TaskStarted}
	if held := h.f.ViewAfter(h.now, []TaskEvent{start}).Accounts[0].Running[cpu]; held != 12 {
		t.Fatalf("with its start on the way, the policy sees %v cpu held by phys, want 12", held)
	}
	if n := h.f.Nodes()[0]; n.Running != 2 || n.Queued != 1 {
		t.Fatalf("node n1 runs %d and queues %d, want 2 and 1", n.Running, n.Queued)
	}
	if ti := taskState(t, h, 1, 2); ti != TaskQueued {
		t.Fatalf("task 2 is %s, want queued", ti)
	}

	// Ten minutes of two running tasks: the queued one is not counted.
	h.at(10 * time.Minute)
	usage := func() float64 { return h.f.View(h.now).Accounts[0].Usage[cpu] }
	if got, want := usage(), 2*4*(10*time.Minute).Seconds(); got != want {
		t.Fatalf("usage after 10 minutes: %v cpu-seconds, want %v (the two running tasks only)", got, want)
	}

	// Task 0 ends: its 4 cpu are free, but claimed by the queue, so the
	// 1-cpu job cannot take them.
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, 10*time.Minute)}})
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 2, Task: 0, Node: "n1"}}}).(*AssignResult); len(r.Dropped) != 1 {
		t.Fatalf("an ordinary placement took room the queue holds: %+v", r)
	}
	if free := h.f.View(h.now).Nodes[0].Free[cpu]; free != 0 {
		t.Fatalf("n1 offers %v free cpu while its queue holds the 4 freed, want 0", free)
	}

	// The worker started it in the freed slot. While the start is on its
	// way through the log, the leader may refill the queue already.
	if n := h.f.ViewAfter(h.now, []TaskEvent{start}).Nodes[0]; n.Free[cpu] != 0 || n.QueueFree[cpu] != 8 {
		t.Fatalf("view after the start: free %v, queue room %v; want 0 and 8", n.Free[cpu], n.QueueFree[cpu])
	}
	h.ok(&TaskEvents{Events: []TaskEvent{start}})
	v = h.f.View(h.now)
	if free, room := v.Nodes[0].Free[cpu], v.Nodes[0].QueueFree[cpu]; free != 0 || room != 8 {
		t.Fatalf("after the start: free %v, queue room %v; want 0 and 8", free, room)
	}
	if n := h.f.Nodes()[0]; n.Running != 2 || n.Queued != 0 || n.Free["cpu"] != 0 {
		t.Fatalf("after the start n1 = %+v, want 2 running, none queued, no cpu free", n)
	}
	h.at(20 * time.Minute)
	// Tasks 0 and 1 for the first 10 minutes; tasks 1 and 2 for the
	// next: task 2 from its start, not from when it was queued.
	if got, want := usage(), 4*(10*time.Minute).Seconds()*(2+2); got != want {
		t.Fatalf("usage after 20 minutes: %v, want %v (two tasks at a time; task 2 counted from its start)", got, want)
	}

	// Charged for what it ran, as an ordinary attempt of the job is.
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 2, 1, 0, 7*time.Minute), exited(1, 1, 1, 0, 7*time.Minute)}})
	tasks, _, err := h.f.Tasks(1, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[2].Charged == 0 || tasks[2].Charged != tasks[1].Charged {
		t.Fatalf("the queued attempt was charged %v and an ordinary one of the same runtime %v", tasks[2].Charged, tasks[1].Charged)
	}
}

// A node's queue holds one node's worth of one-node tasks at most.
func TestLookAheadQueueIsBounded(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 3}, Tasks: 4, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 1, Nodes: 2, Walltime: time.Hour, Command: []string{"mpi"}})
	r := h.ok(&Assign{Placements: []TaskPlacement{
		{JobID: 1, Task: 0, Node: "n1", Queued: true},
		{JobID: 1, Task: 1, Node: "n1", Queued: true},
		{JobID: 1, Task: 2, Node: "n1", Queued: true}, // 9 cpu queued on an 8-cpu node
		{JobID: 2, Task: 0, Node: "n1", Nodes: []string{"n1", "n2"}, Queued: true},
	}}).(*AssignResult)
	if len(r.Accepted) != 2 || len(r.Dropped) != 2 {
		t.Fatalf("assign = %+v, want the first two queued and the rest dropped", r)
	}
	for i, want := range []string{"look-ahead queue has no room", "only a one-node task"} {
		if !strings.Contains(r.Dropped[i].Reason, want) {
			t.Errorf("dropped %d: %q, want it to say %q", i, r.Dropped[i].Reason, want)
		}
	}
	// The queue claims 6 of the 8 free cpu: an ordinary 3-cpu task does
	// not fit in the 2 left.
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}}).(*AssignResult); len(r.Dropped) != 1 {
		t.Fatalf("an ordinary 3-cpu placement went on a node with 2 cpu unclaimed: %+v", r)
	}
}

// A queued attempt that ends before it starts (its job cancelled, its
// node lost) costs nothing and gives its queue room back; its task runs
// again when it has attempts left. The claims survive a restart.
func TestQueuedAttemptThatNeverStartedCostsNothing(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 8}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 2, Walltime: time.Hour, Command: []string{"y"}, MaxAttempts: 2})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1", Queued: true}, {JobID: 2, Task: 1, Node: "n1", Queued: true}}})

	// A restart rebuilds the claims from the stored attempts.
	before := h.f.View(h.now).Nodes[0]
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	h.f = openFSM(t, h.dir)
	if after := h.f.View(h.now).Nodes[0]; !slices.Equal(after.Free, before.Free) || !slices.Equal(after.QueueFree, before.QueueFree) {
		t.Fatalf("after a restart n1 offers free %v, queue room %v; before %v and %v", after.Free, after.QueueFree, before.Free, before.QueueFree)
	}

	h.at(30 * time.Minute)
	// Its worker dropped task 1 from the queue when asked to (a requeue
	// or cancel): exit 143 after no time.
	h.ok(&TaskEvents{Events: []TaskEvent{exited(2, 1, 1, 143, 0)}})
	// n1 is lost: the running task is charged its 30 minutes, the queued
	// one nothing, and it is pending again.
	h.ok(&NodeDown{ID: "n1"})
	tasks, _, err := h.f.Tasks(2, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tasks {
		if ti.Charged != 0 {
			t.Errorf("task %d attempt %d (%s) never started and was charged %v", ti.Task, ti.Attempt, ti.State, ti.Charged)
		}
	}
	run, _, _ := h.f.Tasks(1, 0, 1)
	want, err := ledger.Cost(30*time.Minute, h.f.st.jobs[1].allocation(), h.f.st.settings.BillingWeights, h.f.st.settings.BillingRule)
	if err != nil {
		t.Fatal(err)
	}
	if run[0].Charged != want {
		t.Fatalf("the running attempt lost with its node was charged %v, want %v", run[0].Charged, want)
	}
	if j, _ := h.f.Job(2); j.Pending != 1 || j.Running != 0 {
		t.Fatalf("job 2 = %+v, want task 0 pending again", j)
	}
	// The usage report counts what ran: job 1's 8 cpu for 30 minutes.
	rows, err := h.f.Usage(UsageQuery{From: t0, To: h.now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Usage["cpu"] != 8*(30*time.Minute).Seconds() || rows[0].Runtime != 30*time.Minute {
		t.Fatalf("usage rows %+v: want 8 cpu for 30 minutes, nothing of the queued attempts", rows)
	}
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	if n := h.f.View(h.now).Nodes[0]; !slices.Equal(n.Free, n.Capacity) || !slices.Equal(n.QueueFree, n.Capacity) {
		t.Fatalf("n1 back up offers free %v, queue room %v; want all of %v", n.Free, n.QueueFree, n.Capacity)
	}
}

// The leader's look-ahead pass queues, in the policy's order, only on
// nodes the ordinary pass left full, and only one-node tasks.
func TestLookAheadViewQueuesOnFullNodesOnly(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 8, "mem": 32 << 30}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	engine := sched.NewEngine()
	// pass is the leader's: the ordinary pass, then the look-ahead pass
	// over what it left, in one Assign.
	pass := func() (queued []PlacedTask) {
		t.Helper()
		v := h.f.View(h.now)
		placed, err := engine.Schedule(v)
		if err != nil {
			t.Fatal(err)
		}
		more, err := sched.NewEngine().LookAhead(v, placed)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range more {
			if job := v.Accounts[p.Account].Queue[p.Job]; job.Nodes > 1 {
				t.Fatalf("the look-ahead pass queued a task of parallel job %d", job.ID)
			}
		}
		placed = append(slices.Clone(placed), more...)
		if len(placed) == 0 {
			return nil
		}
		cmd, err := AssignFor(v, placed)
		if err != nil {
			t.Fatal(err)
		}
		r := h.ok(cmd).(*AssignResult)
		if len(r.Dropped) != 0 {
			t.Fatalf("the ledger dropped placements of one pass: %+v", r.Dropped)
		}
		for _, p := range r.Accepted {
			if p.Queued {
				queued = append(queued, p)
			}
		}
		return queued
	}

	// Task 2 goes on n2, which keeps room: nothing is left to queue.
	if q := pass(); len(q) != 0 {
		t.Fatalf("queued %+v with nothing left pending", q)
	}
	// Two of six 2-cpu tasks fill n2; the other four wait in the queues
	// of the two full nodes, in task order.
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 6, Walltime: time.Hour, Command: []string{"z"}})
	q := pass()
	var tasks []int64
	for _, p := range q {
		if p.JobID != 2 {
			t.Fatalf("queued %+v, want tasks of job 2", p)
		}
		tasks = append(tasks, p.Task)
	}
	if !slices.Equal(tasks, []int64{2, 3, 4, 5}) {
		t.Fatalf("queued tasks %v of job 2, want 2 to 5", tasks)
	}
	// A parallel job never waits in a queue. Under the default easy
	// backfill, while one waits nothing is queued (the queues would keep
	// its nodes from draining); under greedy backfill a one-node job is
	// queued where a queue has room.
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 1, Nodes: 2, Walltime: time.Hour, Command: []string{"mpi"}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"small"}})
	if q := pass(); len(q) != 0 {
		t.Fatalf("queued %+v while a parallel job waits under easy backfill", q)
	}
	greedy := "greedy"
	h.ok(&UpdateSettings{Backfill: &greedy})
	q = pass()
	if len(q) != 1 || q[0].JobID != 4 {
		t.Fatalf("queued %+v under greedy backfill, want job 4's task alone", q)
	}
}

func taskState(t *testing.T, h *harness, job uint64, task int64) TaskState {
	t.Helper()
	tasks, _, err := h.f.Tasks(job, task, 1)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("tasks of job %d from %d: %v, %v", job, task, tasks, err)
	}
	return tasks[0].State
}

// Over a random workload with look-ahead passes (workload_test.go), each
// node's free resources and queue claims stay exactly what its attempts
// hold: capacity less the running ones, and the sum of the queued ones;
// and a replica that loads its state from the file at any step (a
// restart) offers every node the same room as one that applied every
// step, so that both decide every placement alike.
func TestWorkloadKeepsNodesAndQueuesInStep(t *testing.T) {
	w := newWorkload(t, 5)
	queued, started := 0, 0
	for step := range 1500 {
		w.step()
		st := w.h.f.st
		var loaded *state
		if err := w.h.f.db.View(func(tx *bolt.Tx) error {
			var err error
			loaded, err = loadState(tx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for id, nd := range st.nodes {
			ld := loaded.nodes[id]
			if ld == nil || !slices.Equal(room(nd), room(ld)) || !slices.Equal(queueRoom(nd), queueRoom(ld)) {
				t.Fatalf("step %d: node %s offers room %v and queue room %v; reloaded, %v and %v", step, id, room(nd), queueRoom(nd), room(ld), queueRoom(ld))
			}
		}
		for _, id := range sortedKeys(st.nodes) {
			nd := st.nodes[id]
			free, claimed := nd.rec.Capacity.Clone(), ledger.NewVector(len(nd.free))
			for tid := range nd.tasks {
				a := st.running[tid]
				if a.State == TaskQueued {
					claimed.Add(a.nodeDemand())
					queued++
					continue
				}
				if a.StartedAt != 0 && a.CountedFrom == a.StartedAt && a.AssignedAt != a.StartedAt {
					started++
				}
				free.Sub(a.nodeDemand())
			}
			if !nd.rec.Up {
				continue
			}
			if !sameVector(free, nd.free) || !sameVector(claimed, pad(nd.queued, len(claimed))) {
				t.Fatalf("step %d: node %s has free %v and queued %v; its attempts say %v and %v", step, id, nd.free, nd.queued, free, claimed)
			}
		}
	}
	if queued == 0 || started == 0 {
		t.Fatalf("the workload queued %d and started %d from a queue: the test covers too little", queued, started)
	}
	t.Logf("%d queued attempt-steps, %d started from a queue", queued, started)
}

func sameVector(a, b ledger.Vector) bool {
	for k := range max(len(a), len(b)) {
		var x, y float64
		if k < len(a) {
			x = a[k]
		}
		if k < len(b) {
			y = b[k]
		}
		if math.Abs(x-y) > 1e-6 {
			return false
		}
	}
	return true
}

// A job whose tasks only wait in look-ahead queues has not started: it
// stays pending, and an after dependency on it, or on one of its
// elements, is met only once a queued task starts.
func TestQueuedJobHasNotStarted(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 8}, Tasks: 1, Walltime: time.Hour, Command: []string{"fill"}})
	h.ok(depJob("queued", "", 2)) // 2
	h.ok(depJob("after-job", "after:2", 1))
	h.ok(depJob("after-element", "after:2_1", 1))
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1", Queued: true}, {JobID: 2, Task: 1, Node: "n1", Queued: true}}})
	if j, _ := h.f.Job(2); j.State != JobPending || j.Pending != 2 || j.Running != 0 || j.Queued != 2 {
		t.Fatalf("job 2 with both tasks queued: %v, %d pending, %d running, %d queued; want pending, 2, 0, 2", j.State, j.Pending, j.Running, j.Queued)
	}
	if queued(h, 3) || queued(h, 4) {
		t.Fatal("an after dependency was met by tasks that only wait in a queue")
	}
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Minute), {JobID: 2, Task: 0, Attempt: 1, Kind: TaskStarted}}})
	if j, _ := h.f.Job(2); j.State != JobRunning || j.Pending != 1 || j.Running != 1 {
		t.Fatalf("job 2 with one task started: %v, %d pending, %d running; want running, 1, 1", j.State, j.Pending, j.Running)
	}
	if !queued(h, 3) || queued(h, 4) {
		t.Fatalf("after task 0 started: after:2 offered %v (want true), after:2_1 offered %v (want false)", queued(h, 3), queued(h, 4))
	}
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 2, Task: 1, Attempt: 1, Kind: TaskStarted}}})
	if !queued(h, 4) {
		t.Fatal("after:2_1 is not met once task 1 started")
	}
}

// Holding a job takes back its tasks that wait in look-ahead queues,
// which would otherwise start on their own: they are marked for their
// workers to stop, cost nothing, and wait as pending tasks until the job
// is released. Its running tasks go on. Lowering its walltime takes them
// back too: they were sent the old one.
func TestHoldAndLowerWalltimeTakeBackQueuedTasks(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 4, Walltime: time.Hour, Command: []string{"x"}})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"},
		{JobID: 1, Task: 2, Node: "n1", Queued: true}, {JobID: 1, Task: 3, Node: "n1", Queued: true}}})
	h.ok(&HoldJob{JobID: 1, Hold: true})
	for _, ti := range h.f.Running("n1") {
		if want := ti.State == TaskQueued; ti.Requeue != want {
			t.Errorf("task %d (%s) marked to be taken back: %v, want %v", ti.Task, ti.State, ti.Requeue, want)
		}
	}
	// Their worker drops them: exit 143 after no time.
	h.at(time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 2, 1, 143, 0), exited(1, 3, 1, 143, 0)}})
	j, _ := h.f.Job(1)
	if j.Pending != 2 || j.Running != 2 || j.Queued != 0 || j.Failed != 0 || j.Charged != 0 {
		t.Fatalf("held job = %+v: want 2 pending again, 2 running, nothing failed or charged", j)
	}
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1", Queued: true}}}).(*AssignResult); len(r.Accepted) != 0 {
		t.Fatal("a held job's task was queued again")
	}
	h.ok(&HoldJob{JobID: 1, Hold: false})
	if r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1", Queued: true}}}).(*AssignResult); len(r.Accepted) != 1 || r.Accepted[0].Attempt != 2 {
		t.Fatalf("after the release: %+v, want task 2 queued again as attempt 2", r)
	}
	// A lower walltime takes back what was queued with the old one; until
	// the stop reaches it, it may run to the limit it was sent.
	half := 30 * time.Minute
	h.ok(&UpdateJob{JobID: 1, Walltime: &half})
	for _, ti := range h.f.Running("n1") {
		if want := ti.State == TaskQueued; ti.Requeue != want {
			t.Errorf("after the walltime was lowered, task %d (%s) marked to be taken back: %v, want %v", ti.Task, ti.State, ti.Requeue, want)
		}
		if ti.Limit != time.Hour {
			t.Errorf("after the walltime was lowered, task %d (%s) has a limit of %v, want the hour it was sent", ti.Task, ti.State, ti.Limit)
		}
	}
}
