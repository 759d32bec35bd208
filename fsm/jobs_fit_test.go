package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

const gib = 1 << 30

// fitHarness has account "phys" (user "ann", 100,000 SU) and no node.
func fitHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.ok(&CreateAccount{Name: "phys"})
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	h.ok(&Grant{ID: "g1", Account: "phys", Amount: 100_000 * ledger.MicroPerSU})
	return h
}

func fitJob(demand map[string]float64) *SubmitJob {
	return &SubmitJob{Account: "phys", User: "ann", Demand: demand, Tasks: 2, Walltime: time.Hour, Command: []string{"x"}, CheckFit: true}
}

// refusedUntouched submits cmd, which must be refused with code, and checks
// that the refusal held nothing and left the state as it was; it returns
// the message.
func refusedUntouched(t *testing.T, h *harness, cmd *SubmitJob, code Kind) string {
	t.Helper()
	before := stateDigest(t, h.f)
	bal, err := h.f.Balance("phys", h.now)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := h.f.Jobs(JobFilter{Account: "phys"})
	if err != nil {
		t.Fatal(err)
	}
	r := h.apply(cmd)
	if r.Err == nil {
		t.Fatalf("demand %v accepted as job %v; want a refusal", cmd.Demand, r.Value)
	}
	if got := KindOf(r.Err); got != code {
		t.Fatalf("demand %v refused with %v (%v), want %v", cmd.Demand, got, r.Err, code)
	}
	if stateDigest(t, h.f) != before {
		t.Fatalf("refusing demand %v changed the state", cmd.Demand)
	}
	after, err := h.f.Balance("phys", h.now)
	if err != nil {
		t.Fatal(err)
	}
	if after != bal {
		t.Fatalf("refusing demand %v changed the balance: %+v, then %+v", cmd.Demand, bal, after)
	}
	if now, _, err := h.f.Jobs(JobFilter{Account: "phys"}); err != nil || len(now) != len(jobs) {
		t.Fatalf("%d jobs after the refusal (%v), %d before", len(now), err, len(jobs))
	}
	return r.Err.Error()
}

// A task no known node could hold is refused at submission, holding
// nothing, and the refusal says what is too large and the largest shape
// there is.
func TestSubmitRefusesATaskNoKnownNodeHolds(t *testing.T) {
	h := fitHarness(t)
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 4, "mem": 16 * gib, "mic": 2}})
	h.ok(&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 4, "mem": 16 * gib}})

	msg := refusedUntouched(t, h, fitJob(map[string]float64{"cpu": 5}), KindPrecondition)
	for _, want := range []string{"no known node has cpu=5", "largest known node has cpu=4 mem=16G mic=2", "ask for at most that"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cpu=5: refusal %q does not say %q", msg, want)
		}
	}
	msg = refusedUntouched(t, h, fitJob(map[string]float64{"cpu": 1, "mic": 100}), KindPrecondition)
	for _, want := range []string{"mic=100", "cpu=4 mem=16G mic=2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("mic=100: refusal %q does not say %q", msg, want)
		}
	}
	// What the largest node holds is accepted, and gets the first job id:
	// the refusals used none.
	info := h.ok(fitJob(map[string]float64{"cpu": 4, "mem": 16 * gib, "mic": 2})).(JobInfo)
	if info.ID != 1 {
		t.Fatalf("first accepted job is %d, want 1", info.ID)
	}
}

// A node without mic holds no task that needs mic; and when no node is the
// largest in every resource, a task may fit each resource's largest but no
// one node: it is refused, and the refusal lists every largest shape.
func TestSubmitRefusesWhatFitsNoSingleNode(t *testing.T) {
	h := fitHarness(t)
	h.ok(&NodeUp{ID: "fat", Capacity: map[string]float64{"cpu": 32, "mem": 128 * gib}})
	msg := refusedUntouched(t, h, fitJob(map[string]float64{"cpu": 1, "mic": 1}), KindPrecondition)
	if !strings.Contains(msg, "mic=1 (none has any mic)") {
		t.Errorf("refusal %q does not say that no node has mic", msg)
	}
	h.ok(&NodeUp{ID: "phi", Capacity: map[string]float64{"cpu": 8, "mem": 96 * gib, "mic": 4}})
	msg = refusedUntouched(t, h, fitJob(map[string]float64{"cpu": 16, "mic": 1}), KindPrecondition)
	for _, want := range []string{"cpu=16 mic=1 on one node", "largest known nodes have", "cpu=32 mem=128G", "cpu=8 mem=96G mic=4", "one of those"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	h.ok(fitJob(map[string]float64{"cpu": 8, "mic": 1}))
	h.ok(fitJob(map[string]float64{"cpu": 32}))
}

// Which nodes count: a node that is down still counts (it may come back);
// with no node known yet there is nothing to judge and any shape is
// accepted; a node that comes back bigger, or a resource added, is seen at
// once.
func TestSubmitFitCountsEveryKnownNode(t *testing.T) {
	h := fitHarness(t)
	h.ok(fitJob(map[string]float64{"cpu": 500})) // no node known yet

	h.ok(&NodeUp{ID: "big", Capacity: map[string]float64{"cpu": 64}})
	h.ok(&NodeUp{ID: "small", Capacity: map[string]float64{"cpu": 4}})
	h.ok(&NodeDown{ID: "big", Reason: "maintenance"})
	h.ok(fitJob(map[string]float64{"cpu": 64})) // fits the node that is down
	refusedUntouched(t, h, fitJob(map[string]float64{"cpu": 65}), KindPrecondition)

	h.ok(&NodeUp{ID: "small", Capacity: map[string]float64{"cpu": 128}}) // re-announced bigger
	h.ok(fitJob(map[string]float64{"cpu": 65}))

	h.ok(&UpdateSettings{AddResources: []string{"gpu"}, BillingWeights: map[string]float64{"cpu": 1, "gpu": 4}})
	r := h.apply(fitJob(map[string]float64{"cpu": 1, "gpu": 1}))
	if KindOf(r.Err) != KindPrecondition || !strings.Contains(r.Err.Error(), "gpu=1") {
		t.Fatalf("gpu=1 with no node having gpu: %v, want a refusal naming gpu=1", r.Err)
	}
	h.ok(&NodeUp{ID: "small", Capacity: map[string]float64{"cpu": 128, "gpu": 2}})
	h.ok(fitJob(map[string]float64{"cpu": 1, "gpu": 1}))
}

// Entries written before CheckFit existed lack it and apply as they did
// then: replaying an old log must rebuild the state it built.
func TestSubmitWithoutCheckFitAppliesAsBefore(t *testing.T) {
	h := fitHarness(t)
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 4}})
	old := fitJob(map[string]float64{"cpu": 5})
	old.CheckFit = false
	h.ok(old)
}
