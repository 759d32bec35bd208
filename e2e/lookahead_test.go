package e2e

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// slotLog is a worker observer that records when each attempt started
// and ended on the worker, in order.
type slotLog struct {
	mu     sync.Mutex
	events []slotEvent
}

type slotEvent struct {
	start bool
	at    time.Time
}

func (l *slotLog) TaskStarted(_ uint64, _ int64, _ int32, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, slotEvent{start: true, at: at})
}

func (l *slotLog) TaskEnded(uint64, int64, int32, int32, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, slotEvent{at: time.Now()})
}

// mostAtOnce is the most attempts that ran at the same time.
func (l *slotLog) mostAtOnce() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, most := 0, 0
	for _, e := range l.events {
		if e.start {
			n++
		} else {
			n--
		}
		most = max(most, n)
	}
	return most
}

// refills is, for every start after the first slots, how long after the
// end that freed its slot it came (ends and starts matched in order), in
// increasing order: how long a slot stayed idle between two tasks.
func (l *slotLog) refills(slots int) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ends []time.Time
	var out []time.Duration
	started := 0
	for _, e := range l.events {
		switch {
		case !e.start:
			ends = append(ends, e.at)
		case started < slots:
			started++
		case len(ends) > 0:
			out = append(out, max(e.at.Sub(ends[0]), 0))
			ends = ends[1:]
		}
	}
	slices.Sort(out)
	return out
}

// With look-ahead, a worker starts the tasks queued on it as slots free,
// and never runs more than its slots at once; each task runs once, is
// charged what it ran, and one that waited in the queue is counted from
// its start.
func TestLookAheadRunsEachTaskOnceWithinTheSlots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := &inproc{Cluster: testcluster.NewWith(t, 1, func(cfg *server.Config) {
		cfg.WorkerLossTimeout = server.DefaultConfig().WorkerLossTimeout
		cfg.LookAhead = true
	}), tb: t}
	account, user := benchAccount(ctx, t, c, "physics")
	log := &slotLog{}
	c.worker(ctx, "w1", map[string]float64{"cpu": 2, "mem": 4 << 30}, log)
	c.waitUp(ctx, 1)

	// Four long tasks on two slots: two run, two wait in w1's queue, and
	// the job's explanation and the node listing say so.
	long := benchSubmit(ctx, t, c, account, user, "long", 4, "sleep 1.5")
	conn := c.leaderConn(ctx)
	testcluster.WaitFor(ctx, t, "two tasks running and two queued on w1", func() bool {
		nodes, err := longfairv1.NewOperatorClient(conn).ListNodes(ctx, &longfairv1.ListNodesRequest{})
		return err == nil && len(nodes.GetNodes()) == 1 && nodes.GetNodes()[0].GetRunningTasks() == 2 && nodes.GetNodes()[0].GetQueuedTasks() == 2
	})
	x, err := longfairv1.NewJobsClient(conn).ExplainJob(ctx, &longfairv1.ExplainJobRequest{JobId: long})
	if err != nil {
		t.Fatal(err)
	}
	if x.GetWait() != longfairv1.JobWait_JOB_WAIT_QUEUED || x.GetJob().GetPendingTasks() != 2 || x.GetJob().GetQueuedTasks() != 2 {
		t.Fatalf("explained %v: want its 2 pending tasks said to be queued", x)
	}
	// Held, it starts nothing more: its queued tasks are taken back, and
	// wait as pending once the running ones have ended.
	jobs := longfairv1.NewJobsClient(conn)
	if _, err := jobs.HoldJob(ctx, &longfairv1.HoldJobRequest{JobId: long}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(ctx, t, "the held job's running tasks to end", func() bool {
		j, err := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: long})
		return err == nil && j.GetRunningTasks() == 0 && j.GetSucceededTasks() == 2
	})
	time.Sleep(500 * time.Millisecond) // a start from the queue would show by now
	if j, err := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: long}); err != nil || j.GetPendingTasks() != 2 || j.GetQueuedTasks() != 0 || j.GetRunningTasks() != 0 {
		t.Fatalf("held job = %v (%v): want its 2 other tasks pending, none queued or running", j, err)
	}
	if _, err := jobs.ReleaseJob(ctx, &longfairv1.ReleaseJobRequest{JobId: long}); err != nil {
		t.Fatal(err)
	}

	const tasks = 12
	id := benchSubmit(ctx, t, c, account, user, "array", tasks, "sleep 0.3")
	j := testcluster.WaitJobEnded(ctx, t, c.Cluster, id)
	if lj := testcluster.WaitJobEnded(ctx, t, c.Cluster, long); lj.GetSucceededTasks() != 4 {
		t.Fatalf("job long = %v, want its 4 tasks succeeded", lj)
	}
	if j.GetSucceededTasks() != tasks {
		t.Fatalf("job = %v, want its %d tasks succeeded", j, tasks)
	}
	if most := log.mostAtOnce(); most > 2 {
		t.Fatalf("%d tasks ran at once on a worker with 2 cpu", most)
	}
	queued := 0
	for _, task := range testcluster.AllTasks(ctx, t, c.Cluster, j.GetId()) {
		if task.GetAttempt() != 1 || task.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
			t.Errorf("task %d: attempt %d %v, want one successful attempt", task.GetIndex(), task.GetAttempt(), task.GetState())
		}
		if !task.GetQueued() {
			continue
		}
		queued++
		if !task.GetStartedAt().AsTime().After(task.GetAssignedAt().AsTime()) {
			t.Errorf("task %d was queued at %v and started at %v", task.GetIndex(), task.GetAssignedAt().AsTime(), task.GetStartedAt().AsTime())
		}
		// Charged what it ran: its `sleep 0.3`, measured by its worker.
		if rt := task.GetRuntime().AsDuration(); rt < 300*time.Millisecond || task.GetChargedMicroSu() <= 0 {
			t.Errorf("queued task %d ran %v and was charged %d micro-SU: want its 0.3 s at least, and a charge", task.GetIndex(), rt, task.GetChargedMicroSu())
		}
	}
	if queued == 0 {
		t.Fatal("no task waited in w1's look-ahead queue")
	}
	t.Logf("%d of %d tasks waited in the queue; slot refills %v", queued, tasks, log.refills(2))
}

// BenchmarkSlotRefill measures how long a slot stays idle between two
// tasks of an array, and the array's rate, with and without look-ahead:
// three servers and a 4-cpu worker in this process, an array of `sleep
// 0.05` (400 tasks; LONGFAIR_BENCH_REFILL_TASKS, and the command
// LONGFAIR_BENCH_REFILL_COMMAND) run to its end. refill-p50-ms and
// refill-p90-ms are from a task's end to the start of the next one in
// its slot, as the worker saw them. Tasks that take the CPU (`true` on
// two cores) measure the CPU instead: see BenchmarkArrayOnDev.
func BenchmarkSlotRefill(b *testing.B) {
	tasks := envInt(b, "LONGFAIR_BENCH_REFILL_TASKS", 400)
	command := cmp.Or(os.Getenv("LONGFAIR_BENCH_REFILL_COMMAND"), "sleep 0.05")
	for _, lookAhead := range []bool{true, false} {
		name := map[bool]string{true: "lookahead", false: "without"}[lookAhead]
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			c := &inproc{Cluster: testcluster.NewWith(b, 3, func(cfg *server.Config) {
				cfg.WorkerLossTimeout = server.DefaultConfig().WorkerLossTimeout
				cfg.LookAhead = lookAhead
			}), tb: b}
			account, user := benchAccount(ctx, b, c, "bench")
			log := &slotLog{}
			c.worker(ctx, "w1", map[string]float64{"cpu": 4, "mem": 8 << 30}, log)
			c.waitUp(ctx, 1)
			b.ResetTimer()
			var span time.Duration
			var refills []time.Duration
			for i := range b.N {
				log.mu.Lock()
				log.events = nil
				log.mu.Unlock()
				id := benchSubmit(ctx, b, c, account, user, fmt.Sprintf("array-%d", i), int64(tasks), command)
				j := testcluster.WaitJobEnded(ctx, b, c.Cluster, id)
				if j.GetSucceededTasks() != int64(tasks) {
					b.Fatalf("the array ended with %d of %d tasks succeeded", j.GetSucceededTasks(), tasks)
				}
				span += j.GetEndedAt().AsTime().Sub(j.GetSubmittedAt().AsTime())
				refills = append(refills, log.refills(4)...)
			}
			b.StopTimer()
			slices.Sort(refills)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(b.N*tasks)/span.Seconds(), "tasks/s")
			if len(refills) > 0 {
				b.ReportMetric(ms(refills[len(refills)/2]), "refill-p50-ms")
				b.ReportMetric(ms(refills[len(refills)*9/10]), "refill-p90-ms")
			}
		})
	}
}
