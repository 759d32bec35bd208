package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// queueHarness has accounts phys (weight 1, user ann, 1000 SU) and chem
// (weight 2), and one up node of 16 cpu and 64 mem.
func queueHarness(t testing.TB) *harness {
	h := newHarness(t)
	h.ok(&CreateAccount{Name: "phys", Weight: f64(1)})
	h.ok(&CreateAccount{Name: "chem", Weight: f64(2)})
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	h.ok(&Grant{ID: "g1", Account: "phys", Amount: 1000 * ledger.MicroPerSU})
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 16, "mem": 64 << 30}})
	return h
}

func TestLatencyQueueAdmission(t *testing.T) {
	h := queueHarness(t)
	// phys bursts 8 cpu for 5 minutes every 10: 2400 cpu-seconds, within
	// its fair share 16 × 600 × 1/3 = 3200, and nothing else is hard.
	q := h.ok(&CreateLatencyQueue{Account: "phys", Period: 10 * time.Minute, Deadline: 5 * time.Minute, Burst: map[string]float64{"cpu": 8}}).(QueueInfo)
	if q.Class != sched.Hard || !strings.HasPrefix(q.Reason, "hard:") {
		t.Fatalf("phys admitted as %v (%s), want hard", q.Class, q.Reason)
	}
	if q.Start != h.now {
		t.Fatalf("an unset start is the command's time: %v, want %v", q.Start, h.now)
	}
	v := h.f.View(h.now)
	if lq := v.Accounts[accountIndex(v, "phys")].Latency; lq == nil || lq.Class != sched.Hard || lq.Burst[0] != 8 || lq.Deadline != 5*time.Minute {
		t.Fatalf("view latency queue %+v", lq)
	}
	if lq := v.Accounts[accountIndex(v, "chem")].Latency; lq != nil {
		t.Fatalf("chem is a throughput queue, the view says %+v", lq)
	}

	// bio joins with weight 3: phys's fair share drops to 1600 < 2400, so
	// the cluster cannot guarantee phys's bursts any more, and the next
	// queue is rejected by the safety condition, with the numbers.
	h.ok(&CreateAccount{Name: "bio", Weight: f64(3)})
	spec := &sched.LatencySpec{Start: h.now, Period: time.Hour, Deadline: time.Minute, Burst: ledger.Vector{1, 0, 0}}
	r := expectRefusal(t, h, cmd(&CreateLatencyQueue{Account: "chem", Start: h.now, Period: time.Hour, Deadline: time.Minute, Burst: map[string]float64{"cpu": 1}}),
		KindPrecondition, []string{"admission control rejects", "chem", "safety condition", `"phys"`})
	// It is admission control's own decision on what the cluster holds.
	physSpec := sched.LatencySpec{Start: q.Start, Period: 10 * time.Minute, Deadline: 5 * time.Minute, Burst: ledger.Vector{8, 0, 0}}
	want, err := sched.AdmitQueue([]string{"cpu", "mem", "mic"}, ledger.Vector{16, 64 << 30, 0}, []sched.AdmittedQueue{
		{QueueRequest: sched.QueueRequest{Name: "bio", Weight: 3}, Class: sched.Elastic},
		{QueueRequest: sched.QueueRequest{Name: "phys", Weight: 1, Latency: &physSpec}, Class: sched.Hard},
	}, sched.QueueRequest{Name: "chem", Weight: 2, Latency: spec})
	if err != nil || want.Class != sched.Rejected || !strings.HasSuffix(r.Err.Error(), want.Reason) {
		t.Fatalf("refusal %q, admission control says %v %q (%v)", r.Err, want.Class, want.Reason, err)
	}

	// Without phys's guarantee, chem's burst is too big for its share and
	// it gets its fair share only: elastic.
	h.ok(&RemoveLatencyQueue{Account: "phys"})
	q = h.ok(&CreateLatencyQueue{Account: "chem", Period: 10 * time.Minute, Deadline: 8 * time.Minute, Burst: map[string]float64{"cpu": 12}}).(QueueInfo)
	if q.Class != sched.Elastic || !strings.Contains(q.Reason, "fairness condition fails") {
		t.Fatalf("chem admitted as %v (%s), want elastic by the fairness condition", q.Class, q.Reason)
	}
	if got := h.f.LatencyQueues(h.now); len(got) != 1 || got[0].Account != "chem" {
		t.Fatalf("latency queues %+v, want chem's only", got)
	}
}

func TestLatencyQueueRefusals(t *testing.T) {
	h := queueHarness(t)
	h.ok(&CreateLatencyQueue{Account: "phys", Period: 10 * time.Minute, Deadline: time.Minute, Burst: map[string]float64{"cpu": 4}})
	ok := func(change func(*CreateLatencyQueue)) *CreateLatencyQueue {
		c := &CreateLatencyQueue{Account: "chem", Period: 10 * time.Minute, Deadline: time.Minute, Burst: map[string]float64{"cpu": 4}}
		change(c)
		return c
	}
	cases := []struct {
		name  string
		cmd   Command
		code  Kind
		words []string
	}{
		{"unknown account", ok(func(c *CreateLatencyQueue) { c.Account = "geo" }), KindNotFound, []string{"geo"}},
		{"twice", ok(func(c *CreateLatencyQueue) { c.Account = "phys" }), KindExists, []string{"phys", "remove it first"}},
		{"unknown resource", ok(func(c *CreateLatencyQueue) { c.Burst = map[string]float64{"gpu": 1} }), KindInvalid, []string{"gpu", "cpu, mem, mic"}},
		{"deadline past period", ok(func(c *CreateLatencyQueue) { c.Deadline = time.Hour }), KindInvalid, []string{"deadline", "at most the period"}},
		{"no period", ok(func(c *CreateLatencyQueue) { c.Period = 0 }), KindInvalid, []string{"period"}},
		{"zero burst", ok(func(c *CreateLatencyQueue) { c.Burst = map[string]float64{"cpu": 0} }), KindInvalid, []string{"zero"}},
		{"no burst", ok(func(c *CreateLatencyQueue) { c.Burst = nil }), KindInvalid, []string{"burst is empty"}},
		{"negative start", ok(func(c *CreateLatencyQueue) { c.Start = -1 }), KindInvalid, []string{"start"}},
		{"remove unknown", &RemoveLatencyQueue{Account: "chem"}, KindNotFound, []string{"chem", "queue list"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectRefusal(t, h, cmd(c.cmd), c.code, c.words) })
	}
	// No capacity, nothing to measure bursts against.
	empty := newHarness(t)
	empty.ok(&CreateAccount{Name: "phys"})
	expectRefusal(t, empty, cmd(&CreateLatencyQueue{Account: "phys", Period: time.Minute, Deadline: time.Minute, Burst: map[string]float64{"cpu": 1}}),
		KindPrecondition, []string{"no worker node is up"})
}

// The FSM keeps what the burst under way has been given, as the engine
// counts it: demand × walltime of every task placed since the burst began.
func TestLatencyQueueCountsTheBurst(t *testing.T) {
	h := queueHarness(t)
	start := h.now
	h.ok(&CreateLatencyQueue{Account: "phys", Start: start, Period: 10 * time.Minute, Deadline: 5 * time.Minute, Burst: map[string]float64{"cpu": 8}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2, "mem": 1 << 30}, Tasks: 3, Walltime: 30 * time.Minute, Command: []string{"x"}})
	used := func(at time.Duration) ledger.Vector {
		v := h.f.View(start.Add(at))
		if j := v.Accounts[accountIndex(v, "phys")].Queue; len(j) > 0 && j[0].Walltime != 30*time.Minute {
			t.Fatalf("view job walltime %v, want the job's 30m", j[0].Walltime)
		}
		return v.Accounts[accountIndex(v, "phys")].Latency.Used
	}
	if u := used(time.Minute); u != nil {
		t.Fatalf("nothing placed yet, the burst has used %v", u)
	}
	h.at(time.Minute).ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	// Two tasks of 2 cpu and 1 GiB, 1800 s each.
	if u := used(2 * time.Minute); !u.Fits(ledger.Vector{7200, 3600 << 30, 0}) || !(ledger.Vector{7200, 3600 << 30, 0}).Fits(u) {
		t.Fatalf("burst used %v, want <7200, 3600 GiB·s, 0>", u)
	}
	info := h.f.LatencyQueues(start.Add(2 * time.Minute))[0]
	if info.BurstStart != start || info.Used["cpu"] != 7200 {
		t.Fatalf("queue info %+v", info)
	}
	// The next burst starts afresh.
	if u := used(11 * time.Minute); u != nil {
		t.Fatalf("a new burst has used %v already", u)
	}
	h.at(12 * time.Minute).ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}})
	if u := used(13 * time.Minute); u[0] != 3600 {
		t.Fatalf("second burst used %v, want 3600 cpu-seconds", u)
	}
	// It is stored: a restarted FSM sees the same.
	before := h.f.View(start.Add(13 * time.Minute))
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	f := openFSM(t, h.dir)
	after := f.View(start.Add(13 * time.Minute))
	if got, want := after.Accounts[accountIndex(after, "phys")].Latency, before.Accounts[accountIndex(before, "phys")].Latency; got.Used[0] != want.Used[0] || got.Class != want.Class {
		t.Fatalf("after a restart the queue is %+v, before %+v", got, want)
	}
}

func accountIndex(v *sched.View, name string) int {
	for i := range v.Accounts {
		if v.Accounts[i].Name == name {
			return i
		}
	}
	panic("no account " + name)
}
