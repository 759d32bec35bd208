package sched

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// queueView is one machine of 100 CPUs shared by throughput queues with
// backlogs of 1-CPU tasks and, first, one latency queue with pending tasks
// of 1 CPU whose bursts are declared to need burst CPUs.
func queueView(policy Policy, throughput int, lq *LatencyQueue, lqTasks int) *View {
	v := &View{
		Resources: []string{"cpu"},
		Nodes:     []Node{{ID: "machine", Capacity: ledger.Vector{100}, Free: ledger.Vector{100}}},
		Settings:  Settings{Policy: policy, Quantum: time.Minute, Placement: Affinity},
	}
	zero := func() ledger.Vector { return ledger.NewVector(1) }
	v.Accounts = append(v.Accounts, Account{Name: "lq", Weight: 1, Running: zero(), Usage: zero(), Baseline: zero(), BaselineRate: zero(),
		Latency: lq, Queue: []Job{{ID: 1, Demand: ledger.Vector{1}, Pending: lqTasks, Walltime: 30 * time.Second}}})
	for i := range throughput {
		v.Accounts = append(v.Accounts, Account{Name: "tq" + string(rune('0'+i)), Weight: 1, Running: zero(), Usage: zero(), Baseline: zero(), BaselineRate: zero(),
			Queue: []Job{{ID: uint64(10 + i), Demand: ledger.Vector{1}, Pending: 1000, Walltime: time.Hour}}})
	}
	return v
}

func latency(class QueueClass, burst float64, used float64) *LatencyQueue {
	return &LatencyQueue{
		LatencySpec: LatencySpec{Period: 300 * time.Second, Deadline: 30 * time.Second, Burst: ledger.Vector{burst}},
		Class:       class, Used: ledger.Vector{used},
	}
}

// tasksPer counts the placements of each account.
func tasksPer(v *View, ps []Placement) []int {
	n := make([]int, len(v.Accounts))
	for _, p := range ps {
		n[p.Account]++
	}
	return n
}

func TestBPFBoundsTheLatencyQueuesPriority(t *testing.T) {
	// One latency queue with 90 tasks and three backlogged throughput
	// queues: a fair share is 25 CPUs. The latency queue's burst asks for
	// 80 CPUs for 30 s every 300 s: 2,400 CPU-s per period, within its fair
	// share of 7,500.
	cases := []struct {
		name       string
		policy     Policy
		lq         *LatencyQueue
		throughput int
		want       int // CPUs the latency queue gets
	}{
		{"drf ignores the burst", DRF, latency(Hard, 80, 0), 3, 25},
		{"sp gives it all it wants", SP, latency(Hard, 80, 0), 3, 90},
		{"sp has no bound", SP, latency(Hard, 80, 1e9), 3, 90},
		{"bpf hard: up to its burst", BPF, latency(Hard, 80, 0), 3, 80},
		{"bpf soft alone: up to its burst", BPF, latency(Soft, 80, 0), 3, 80},
		{"bpf elastic: fair share", BPF, latency(Elastic, 80, 0), 3, 25},
		{"bpf with the burst given: spare room only", BPF, latency(Hard, 80, 80*30), 3, 0},
		{"bpf with most of the burst given: what is left of it", BPF, latency(Hard, 80, 80*29), 3, 2},
		{"bpf with a small burst: that burst only", BPF, latency(Hard, 10, 0), 3, 10},
		{"bpf with the burst given and spare room", BPF, latency(Hard, 80, 80*30), 0, 90},
	}
	for _, c := range cases {
		v := queueView(c.policy, c.throughput, c.lq, 90)
		ps, err := NewEngine().Schedule(v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := tasksPer(v, ps)
		if got[0] != c.want {
			t.Errorf("%s: the latency queue got %d CPUs, want %d (all: %v)", c.name, got[0], c.want, got)
		}
		total := 0
		for _, n := range got {
			total += n
		}
		if want := min(100, 90+1000*c.throughput); total != want {
			t.Errorf("%s: %d CPUs used, want %d: every policy here is work conserving", c.name, total, want)
		}
		// Throughput queues share what is left equally (DRF).
		for i := 2; i < len(got); i++ {
			if d := got[i] - got[1]; d < -1 || d > 1 {
				t.Errorf("%s: throughput queues got %v, not an equal split", c.name, got[1:])
			}
		}
	}
}

func TestBPFServesHardThenSoftShortestFirst(t *testing.T) {
	zero := func() ledger.Vector { return ledger.NewVector(1) }
	lq := func(name string, class QueueClass, burst float64, tasks int, walltime time.Duration) Account {
		return Account{Name: name, Weight: 1, Running: zero(), Usage: zero(), Baseline: zero(), BaselineRate: zero(),
			Latency: latency(class, burst, 0),
			Queue:   []Job{{ID: uint64(len(name)), Demand: ledger.Vector{1}, Pending: tasks, Walltime: walltime}}}
	}
	v := &View{
		Resources: []string{"cpu"},
		Nodes:     []Node{{ID: "machine", Capacity: ledger.Vector{100}, Free: ledger.Vector{100}}},
		Settings:  Settings{Policy: BPF, Quantum: time.Minute, Placement: Affinity},
		Accounts: []Account{
			lq("long", Soft, 60, 50, 20*time.Second),  // 1,000 CPU-s left
			lq("short", Soft, 60, 40, 10*time.Second), // 400 CPU-s left
			lq("hard", Hard, 30, 30, 30*time.Second),
			{Name: "tq", Weight: 1, Running: zero(), Usage: zero(), Baseline: zero(), BaselineRate: zero(),
				Queue: []Job{{ID: 9, Demand: ledger.Vector{1}, Pending: 1000}}},
		},
	}
	ps, err := NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	order := []int{}
	for _, p := range ps {
		if len(order) == 0 || order[len(order)-1] != p.Account {
			order = append(order, p.Account)
		}
	}
	// Hard first (30), then the soft queue with less work left (40), then
	// the other soft one up to what is left (30).
	if want := []int{2, 1, 0}; len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Errorf("served accounts in runs %v, want hard (2), then short (1), then long (0)", order)
	}
	if got := tasksPer(v, ps); got[2] != 30 || got[1] != 40 || got[0] != 30 || got[3] != 0 {
		t.Errorf("tasks per queue %v, want long 30, short 40, hard 30, tq 0", got)
	}
}

func TestBPFSoftQueueWithLessWorkFinishesFirst(t *testing.T) {
	// Both soft queues could take the whole machine; the one with less work
	// left is served to the end before the other gets anything, even though
	// it is listed second.
	zero := func() ledger.Vector { return ledger.NewVector(1) }
	mk := func(name string, tasks int) Account {
		return Account{Name: name, Weight: 1, Running: zero(), Usage: zero(), Baseline: zero(), BaselineRate: zero(),
			Latency: latency(Soft, 100, 0), Queue: []Job{{ID: uint64(tasks), Demand: ledger.Vector{1}, Pending: tasks, Walltime: time.Second}}}
	}
	v := &View{
		Resources: []string{"cpu"},
		Nodes:     []Node{{ID: "machine", Capacity: ledger.Vector{100}, Free: ledger.Vector{100}}},
		Settings:  Settings{Policy: BPF, Quantum: time.Minute, Placement: Affinity},
		Accounts:  []Account{mk("a", 30), mk("b", 20)},
	}
	ps, err := NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		want := 1
		if i >= 20 {
			want = 0
		}
		if p.Account != want {
			t.Fatalf("placement %d went to account %d: the smaller queue b must finish first", i, p.Account)
		}
	}
}

func TestLatencySpecBurstStart(t *testing.T) {
	s := LatencySpec{Start: ledger.Time(50 * time.Second), Period: 150 * time.Second}
	for now, want := range map[time.Duration]time.Duration{
		50 * time.Second:   50 * time.Second,
		199 * time.Second:  50 * time.Second,
		200 * time.Second:  200 * time.Second,
		49 * time.Second:   -100 * time.Second,
		0:                  -100 * time.Second,
		-100 * time.Second: -100 * time.Second,
		-101 * time.Second: -250 * time.Second,
	} {
		if got := s.BurstStart(ledger.Time(now)); got != ledger.Time(want) {
			t.Errorf("burst under way at %v starts at %v, want %v", now, time.Duration(got), want)
		}
	}
	// Brute force: the start is the latest Start + n·Period not after now.
	r := rand.New(rand.NewPCG(71, 1))
	for range 1000 {
		s := LatencySpec{Start: ledger.Time(r.Int64N(2000) - 1000), Period: time.Duration(1 + r.IntN(100))}
		now := ledger.Time(r.Int64N(4000) - 2000)
		got := s.BurstStart(now)
		if got > now || got+ledger.Time(s.Period) <= now || (got-s.Start)%ledger.Time(s.Period) != 0 {
			t.Fatalf("start %d period %d now %d: burst start %d", s.Start, s.Period, now, got)
		}
	}
}

func TestBadLatencyQueueIsRefused(t *testing.T) {
	cases := map[string]func(q *LatencyQueue){
		"zero period":              func(q *LatencyQueue) { q.Period = 0 },
		"deadline past the period": func(q *LatencyQueue) { q.Deadline = q.Period + 1 },
		"zero deadline":            func(q *LatencyQueue) { q.Deadline = 0 },
		"zero burst":               func(q *LatencyQueue) { q.Burst = ledger.Vector{0} },
		"short burst":              func(q *LatencyQueue) { q.Burst = ledger.Vector{} },
		"negative usage":           func(q *LatencyQueue) { q.Used = ledger.Vector{-1} },
		"rejected class":           func(q *LatencyQueue) { q.Class = Rejected },
	}
	for name, spoil := range cases {
		lq := latency(Hard, 50, 0)
		spoil(lq)
		v := queueView(BPF, 1, lq, 10)
		if _, err := NewEngine().Schedule(v); err == nil || !strings.Contains(err.Error(), "lq") {
			t.Errorf("%s: got %v, want an error naming the account", name, err)
		}
	}
}

func TestQueueClassText(t *testing.T) {
	for _, c := range []QueueClass{Elastic, Hard, Soft, Rejected} {
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back QueueClass
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("%v round-trips to %v (%v)", c, back, err)
		}
	}
	var c QueueClass
	if err := c.UnmarshalText([]byte("urgent")); err == nil || !strings.Contains(err.Error(), "elastic, hard, soft") {
		t.Errorf("unknown class: %v", err)
	}
}
