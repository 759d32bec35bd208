package fsm

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Issue 10, item 1 ("free compute"): a task costs at least what it
// occupies. These tests reproduce each symptom at the FSM, which must not
// trust the API to have refused anything.

// Demands below one unit of their resource are refused, naming the field,
// the unit and what to ask for: at head, 1e-6 of a core (40 such tasks
// held 0 SU and packed a 4-core node 13 deep), 1e-300 of a core and 4 bytes
// of memory were accepted.
func TestSubUnitDemandsAreRefused(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	for _, c := range []struct {
		name   string
		demand map[string]float64
		words  []string
	}{
		{"micro core", map[string]float64{"cpu": 0.000001}, []string{"demand[cpu]", "0.01 core", "at least 0.01"}},
		{"1e-300 core", map[string]float64{"cpu": 1e-300}, []string{"demand[cpu]", "0.01 core"}},
		{"4 bytes", map[string]float64{"cpu": 1, "mem": 4}, []string{"demand[mem]", "MiB", "at least 1048576"}},
		{"half a MIC", map[string]float64{"mic": 0.5}, []string{"demand[mic]", "whole", "at least 1"}},
		{"negative", map[string]float64{"cpu": -1}, []string{"demand[cpu]", "finite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectRefusal(t, h, cmd(job(func(j *SubmitJob) { j.Demand = c.demand; j.Tasks = 40 })), KindInvalid, c.words)
		})
	}
}

// A demand that is not a whole number of units is rounded up, and the
// rounded quantity is the one the job shows, the engine places, the node
// loses and the ledger holds: 0.015 core is 0.02, so a 4-core node takes
// 200 such tasks, not 266.
func TestDemandIsRoundedUpToUnits(t *testing.T) {
	h := newHarness(t)
	h.ok(&CreateAccount{Name: "phys"})
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	h.ok(&Grant{ID: "g1", Account: "phys", Amount: 1000 * ledger.MicroPerSU})
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 4, "mem": 1 << 40}})
	j := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 0.015, "mem": 2e9}, Tasks: 300, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	if j.Demand["cpu"] != 0.02 || j.Demand["mem"] != 1908<<20 {
		t.Fatalf("job demand %v, want cpu 0.02 and mem 1908 MiB (rounded up)", j.Demand)
	}
	// 300 × 1 h × max(0.02 × 1, 1908/1024 GiB × 0.25) SU.
	want, _ := ledger.WorstCaseHold(300, time.Hour, ledger.Vector{0.02, 1908 << 20, 0}, defaultBillingWeights, ledger.BillingMax)
	if j.Hold != want || j.Hold == 0 {
		t.Fatalf("hold %v, want %v", j.Hold, want)
	}
	placed := schedulePass(t, h)
	if placed != 200 {
		t.Fatalf("the engine placed %d tasks of 0.015 (0.02) core on a 4-core node, want 200", placed)
	}
	if free := h.f.Nodes()[0].Free["cpu"]; free != 0 {
		t.Fatalf("node has %v cpu free after 200 tasks of 0.02, want exactly 0", free)
	}
}

// schedulePass runs the real engine on the FSM's view and applies what it
// placed; it returns how many placements the FSM accepted.
func schedulePass(t *testing.T, h *harness) int {
	t.Helper()
	v := h.f.View(h.now)
	ps, err := sched.NewEngine().Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		return 0
	}
	c, err := AssignFor(v, ps)
	if err != nil {
		t.Fatal(err)
	}
	r := h.ok(c).(*AssignResult)
	if len(r.Dropped) != 0 {
		t.Fatalf("the FSM dropped %d of the engine's placements: %+v", len(r.Dropped), r.Dropped[0])
	}
	return len(r.Accepted)
}

// A hundred tasks of 0.01 core fill a 1-core node exactly and the 101st
// does not fit, through the engine and through the FSM; likewise ten of
// 0.1 and fourteen of 0.07 (leaving 0.02). The node's free vector is the
// exact decimal amount left — not 1.4e-16 after ten 0.1-core tasks, as
// float subtraction leaves at head — and exactly its capacity when empty,
// on the live FSM and on a restored copy, whatever order tasks ended in.
func TestFractionalCoreTasksFillANodeExactly(t *testing.T) {
	h := newHarness(t)
	h.ok(&CreateAccount{Name: "phys"})
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	h.ok(&Grant{ID: "g1", Account: "phys", Amount: 1000 * ledger.MicroPerSU})
	h.ok(&NodeUp{ID: "one", Capacity: map[string]float64{"cpu": 1}})
	for round, c := range []struct {
		cpu  float64
		fit  int
		left float64
	}{{0.01, 100, 0}, {0.1, 10, 0}, {0.07, 14, 0.02}, {0.01, 100, 0}} {
		id := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": c.cpu}, Tasks: int64(c.fit + 1), Walltime: time.Hour, Command: []string{"x"}}).(JobInfo).ID
		if placed := schedulePass(t, h); placed != c.fit {
			t.Fatalf("round %d: the engine placed %d tasks of %v core on a 1-core node, want %d", round, placed, c.cpu, c.fit)
		}
		r := h.ok(&Assign{Placements: []TaskPlacement{{JobID: id, Task: int64(c.fit), Node: "one"}}}).(*AssignResult)
		if len(r.Accepted) != 0 {
			t.Fatalf("round %d: the FSM placed task %d of %v core on a 1-core node", round, c.fit+1, c.cpu)
		}
		if free := h.f.Nodes()[0].Free["cpu"]; free != c.left {
			t.Fatalf("round %d: after %d tasks of %v core the node has %v cpu free, want exactly %v", round, c.fit, c.cpu, free, c.left)
		}
		// End the tasks in a scrambled order, a few at a time, checking
		// the live state against a restored one.
		var events []TaskEvent
		for i := range c.fit {
			events = append(events, exited(id, int64((i*37+round)%c.fit), 1, 0, time.Minute))
		}
		for len(events) > 0 {
			n := min(len(events), 7+round)
			h.at(time.Duration(round+1) * time.Hour).ok(&TaskEvents{Events: events[:n]})
			events = events[n:]
			restored := restoredCopy(t, h.f)
			if a, b := h.f.Nodes()[0].Free["cpu"], restored.Nodes()[0].Free["cpu"]; math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("round %d: live node has %v cpu free, restored %v", round, a, b)
			}
			restored.Close()
		}
		h.ok(&CancelJob{JobID: id})
		if free := h.f.Nodes()[0].Free["cpu"]; free != 1 {
			t.Fatalf("round %d: an empty node has %v cpu free, want exactly 1", round, free)
		}
	}
}

// restoredCopy restores a snapshot of f into a fresh FSM, which rebuilds
// every node's free vector from the stored records.
func restoredCopy(t *testing.T, f *FSM) *FSM {
	t.Helper()
	sink := snapshotOf(t, f)
	other := newHarness(t).f
	if err := other.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	return other
}

// A task asking only memory pays for the share of a node that memory is,
// the same as the cores it keeps others from using: at head it held and
// paid 0 SU. A CPU-only task still costs its core-hours.
func TestMemoryOnlyTaskPaysItsNodeShare(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	s := h.f.Settings()
	if s.BillingRule != ledger.BillingMax || s.BillingWeights["mem"] == 0 || s.BillingWeights["mic"] == 0 {
		t.Fatalf("default billing: rule %v, weights %v; want max with every resource priced", s.BillingRule, s.BillingWeights)
	}
	// Under the default weights 16 GiB are a quarter of a 64 GiB node,
	// priced like a quarter of its 16 cores.
	mem := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"mem": 16 << 30}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	cpu := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 4}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo)
	if mem.Hold == 0 || mem.Hold != cpu.Hold || cpu.Hold != 4*ledger.MicroPerSU {
		t.Fatalf("holds: 16 GiB %v SU, 4 cores %v SU; want 4 SU each", mem.Hold, cpu.Hold)
	}
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: mem.ID, Task: 0, Node: "n1"}, {JobID: cpu.ID, Task: 0, Node: "n1"}}})
	h.at(30 * time.Minute).ok(&TaskEvents{Events: []TaskEvent{exited(mem.ID, 0, 1, 0, 30*time.Minute), exited(cpu.ID, 0, 1, 0, 30*time.Minute)}})
	memJob, _ := h.f.Job(mem.ID)
	cpuJob, _ := h.f.Job(cpu.ID)
	if memJob.Charged != 2*ledger.MicroPerSU || cpuJob.Charged != memJob.Charged {
		t.Fatalf("charges for 30 min: 16 GiB %v, 4 cores %v; want 2 SU each", memJob.Charged, cpuJob.Charged)
	}
	// A CPU-only job costs what it always did: its core-hours.
	if c := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2, "mem": 4 << 30}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo); c.Hold != 6*ledger.MicroPerSU {
		t.Fatalf("3 × 1 h × 2 cores with 4 GiB holds %v, want 6 SU", c.Hold)
	}
	// Each charge records the rule it was priced by.
	for _, e := range charges(h) {
		if e.Detail.Rule != ledger.BillingMax {
			t.Fatalf("charge %s detail has rule %v, want max", e.ID, e.Detail.Rule)
		}
	}
	if _, err := h.f.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// The billing rule is a setting: sum bills every weighted resource, and an
// unknown rule is refused naming the rules.
func TestBillingRuleSetting(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	expectRefusal(t, h, cmd(&UpdateSettings{BillingRule: strp("avg")}), KindInvalid, []string{"avg", "max", "sum"})
	s := h.ok(&UpdateSettings{BillingRule: strp("sum")}).(SettingsInfo)
	if s.BillingRule != ledger.BillingSum {
		t.Fatalf("rule %v after setting sum", s.BillingRule)
	}
	// 2 cores + 4 GiB (1 SU/h) for an hour: 3 SU under sum.
	if j := h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2, "mem": 4 << 30}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}).(JobInfo); j.Hold != 3*ledger.MicroPerSU {
		t.Fatalf("sum hold %v, want 3 SU", j.Hold)
	}
	if got := restoredCopy(t, h.f).Settings().BillingRule; got != ledger.BillingSum {
		t.Fatalf("rule after a restore: %v, want sum", got)
	}
	// A new resource comes with its price; 0 is a choice, not a default.
	expectRefusal(t, h, cmd(&UpdateSettings{AddResources: []string{"gpu"}}), KindInvalid, []string{`"gpu"`, "billing weight"})
	s = h.ok(&UpdateSettings{AddResources: []string{"gpu", "lic"}, BillingWeights: map[string]float64{"cpu": 1, "gpu": 4, "lic": 0}}).(SettingsInfo)
	if s.BillingWeights["gpu"] != 4 || s.BillingWeights["lic"] != 0 || len(s.Resources) != 5 {
		t.Fatalf("after adding gpu=4 and lic=0: %v %v", s.Resources, s.BillingWeights)
	}
}

// A cluster whose settings were stored before billing rules existed keeps
// billing by sum, the rule it was configured under, when a new server
// reads its state; only new clusters start with max.
func TestSettingsWithoutARuleReadAsSum(t *testing.T) {
	h := newHarness(t)
	h.setup(100)
	h.ok(&UpdateSettings{BillingWeights: map[string]float64{"cpu": 1, "mem": 0.25 / (1 << 30)}})
	// Rewrite the stored record as an older release wrote it.
	editStateFile(t, h.f, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSettings)
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(b.Get(keySettings), &rec); err != nil {
			return err
		}
		if _, ok := rec["billing_rule"]; !ok {
			t.Errorf("the stored settings have no billing_rule: %v", rec)
		}
		delete(rec, "billing_rule")
		data, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put(keySettings, data)
	})
	f := openFSM(t, h.dir)
	if got := f.Settings().BillingRule; got != ledger.BillingSum {
		t.Fatalf("settings stored without a rule read as %v, want sum", got)
	}
	if w := f.Settings().BillingWeights; w["cpu"] != 1 || w["mem"] != 0.25/(1<<30) {
		t.Fatalf("the stored weights read as %v", w)
	}
}
