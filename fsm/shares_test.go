package fsm

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

func TestSharesReachTheView(t *testing.T) {
	h := treeHarness(t)
	h.ok(&SetShares{Shares: []AccountShare{{"bio", 0.5}, {"chem", 0.25}, {"phys", 0.25}}})
	shareOf := func() map[string]float64 {
		out := map[string]float64{}
		for _, a := range h.f.View(h.now).Accounts {
			out[a.Name] = a.Share
		}
		return out
	}
	if got := shareOf(); !reflect.DeepEqual(got, map[string]float64{"bio": 0.5, "chem": 0.25, "phys": 0.25}) {
		t.Fatalf("view shares %v", got)
	}
	// A new set replaces the old one: accounts left out have no partition.
	info := h.ok(&SetShares{Shares: []AccountShare{{"chem", 0.6}, {"phys", 0.4}}}).(SharesInfo)
	if info.At != h.now || !reflect.DeepEqual(info.Shares, map[string]float64{"chem": 0.6, "phys": 0.4}) {
		t.Fatalf("set-shares answered %+v", info)
	}
	if got := shareOf(); got["bio"] != 0 || got["chem"] != 0.6 {
		t.Fatalf("view shares after replacing %v", got)
	}
	r, err := h.f.Fairness("chem", h.now)
	if err != nil || r.Accounts[0].FawkesShare != 0.6 {
		t.Fatalf("fairness report of chem: %+v, %v", r.Accounts, err)
	}

	for name, c := range map[string]struct {
		cmd   *SetShares
		code  Kind
		words []string
	}{
		"over the cluster": {&SetShares{Shares: []AccountShare{{"bio", 0.7}, {"chem", 0.7}}}, KindInvalid, []string{"1.4", "at most 1"}},
		"out of order":     {&SetShares{Shares: []AccountShare{{"chem", 0.1}, {"bio", 0.1}}}, KindInvalid, []string{"name order"}},
		"twice":            {&SetShares{Shares: []AccountShare{{"chem", 0.1}, {"chem", 0.1}}}, KindInvalid, []string{"once"}},
		"negative":         {&SetShares{Shares: []AccountShare{{"chem", -0.1}}}, KindInvalid, []string{"[0, 1]"}},
		"unknown account":  {&SetShares{Shares: []AccountShare{{"geo", 0.1}}}, KindNotFound, []string{"geo"}},
	} {
		t.Run(name, func(t *testing.T) { expectRefusal(t, h, cmd(c.cmd), c.code, c.words) })
	}
	if _, err := Encode(h.now, &SetShares{Shares: []AccountShare{{"chem", math.NaN()}}}); KindOf(err) != KindInvalid {
		t.Fatalf("Encode of a NaN share: %v", err)
	}
}

func TestQKnoblerAndFawkesSettings(t *testing.T) {
	h := treeHarness(t)
	s := h.f.Settings()
	if s.Sched.QKnoblerRho != sched.DefaultQKnoblerRho || s.Sched.Fawkes != (fawkes.Config{}) {
		t.Fatalf("defaults: ρ %v, fawkes %+v", s.Sched.QKnoblerRho, s.Sched.Fawkes)
	}
	// ρ = 0 is a value of its own, not "unset".
	zero := 0.0
	s = h.ok(&UpdateSettings{Policy: strp("qknobler"), QKnoblerRho: &zero}).(SettingsInfo)
	if s.Sched.QKnoblerRho != 0 || h.f.View(h.now).Settings.QKnoblerRho != 0 {
		t.Fatalf("ρ set to 0 reads back as %v", s.Sched.QKnoblerRho)
	}
	interval, guarantee := 5*time.Minute, 0.5
	s = h.ok(&UpdateSettings{Fawkes: &FawkesUpdate{Weighting: strp("JD"), Interval: &interval, Guarantee: &guarantee}}).(SettingsInfo)
	want := fawkes.Config{Weighting: fawkes.JD, Interval: interval, Guarantee: guarantee}
	if s.Sched.Fawkes != want {
		t.Fatalf("fawkes settings %+v, want %+v", s.Sched.Fawkes, want)
	}
	// A later update of one field keeps the others, and ρ.
	tau := -1.0
	s = h.ok(&UpdateSettings{Fawkes: &FawkesUpdate{Threshold: &tau}}).(SettingsInfo)
	want.Threshold = -1
	if s.Sched.Fawkes != want || s.Sched.QKnoblerRho != 0 || s.Policy != sched.QKnobler {
		t.Fatalf("after a partial update: %+v ρ %v policy %v", s.Sched.Fawkes, s.Sched.QKnoblerRho, s.Policy)
	}

	bad := func(u *UpdateSettings) func(testing.TB, ledger.Time) []byte { return cmd(u) }
	two, one := 2.0, 1.0
	for name, c := range map[string]struct {
		u     *UpdateSettings
		words []string
	}{
		"ρ above 1":         {&UpdateSettings{QKnoblerRho: &two}, []string{"ρ", "[0, 1]"}},
		"unknown weighting": {&UpdateSettings{Fawkes: &FawkesUpdate{Weighting: strp("fifo")}}, []string{"fifo", "td"}},
		"guarantee above 1": {&UpdateSettings{Fawkes: &FawkesUpdate{Guarantee: &two}}, []string{"guarantee", "[0, 1]"}},
		"base 1":            {&UpdateSettings{Fawkes: &FawkesUpdate{Base: &one}}, []string{"base", "above 1"}},
		"unknown disk":      {&UpdateSettings{Fawkes: &FawkesUpdate{Disk: strp("ssd")}}, []string{"ssd", "not one of"}},
		"negative interval": {&UpdateSettings{Fawkes: &FawkesUpdate{Interval: durp(-time.Second)}}, []string{"interval", "positive"}},
	} {
		t.Run(name, func(t *testing.T) { expectRefusal(t, h, bad(c.u), KindInvalid, c.words) })
	}
	// The settings survive a restart.
	before := h.f.Settings()
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	if after := openFSM(t, h.dir).Settings(); !reflect.DeepEqual(after, before) {
		t.Fatalf("settings after a restart %+v, want %+v", after, before)
	}
}

func durp(d time.Duration) *time.Duration { return &d }

// Replicas that apply a log full of tree, queue and share commands —
// scheduling passes under bpf, dff and fawkes among them — in batches of
// any size hold byte-identical state and the same scheduler view.
func TestPolicyCommandsReplicate(t *testing.T) {
	w := newWorkload(t, 21)
	h := w.h
	h.ok(&CreateLatencyQueue{Account: "acct0", Period: 10 * time.Minute, Deadline: 2 * time.Minute, Burst: map[string]float64{"cpu": 8}})
	policies := []string{"bpf", "dff", "fawkes", "hdrf", "sp"}
	for i := range 300 {
		switch i % 10 {
		case 0:
			h.apply(&UpdateSettings{Policy: strp(policies[(i/10)%len(policies)])})
		case 3:
			h.apply(&SetAccountGroup{Account: fmt.Sprintf("acct%d", w.rng.IntN(4)), Group: []string{"", "org", "org/a", "org/b"}[w.rng.IntN(4)]})
		case 5:
			h.apply(&SetGroupWeight{Path: []string{"org", "org/a", "org/b"}[w.rng.IntN(3)], Weight: float64(w.rng.IntN(5))})
		case 7:
			x := w.rng.Float64()
			h.apply(&SetShares{Shares: []AccountShare{{"acct0", x / 2}, {"acct1", (1 - x) / 2}, {"acct2", 0.25}, {"acct3", 0.25}}})
		default:
			w.step()
		}
	}
	want := digestOf(t, h.f)
	other := openFSM(t, t.TempDir())
	replay(t, other, h.log, []int{5, 1, 33})
	if got := digestOf(t, other); got != want {
		t.Fatal("the replica's state differs")
	}
	if !reflect.DeepEqual(h.f.View(h.now), other.View(h.now)) {
		t.Fatal("the replicas' scheduler views differ")
	}
	if len(other.Groups()) == 0 || len(other.LatencyQueues(h.now)) != 1 || len(other.Shares().Shares) == 0 {
		t.Fatalf("the workload did not exercise the tree, queues and shares: %d groups, %d queues, %v shares",
			len(other.Groups()), len(other.LatencyQueues(h.now)), other.Shares())
	}
}

// The leader samples FawkesInput every second whatever the policy. Under
// fawkes it carries every account's unfinished jobs; under any other
// policy it carries the policy alone, so that a big queue is not copied
// each second for nothing.
func TestFawkesInputCopiesJobsOnlyUnderFawkes(t *testing.T) {
	h := treeHarness(t)
	h.ok(&CreateUser{Name: "ann", Accounts: []string{"phys", "chem"}})
	for _, a := range []string{"phys", "chem"} {
		h.ok(&Grant{ID: "g-" + a, Account: a, Amount: 1000 * ledger.MicroPerSU})
		h.ok(&SubmitJob{Account: a, User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}})
	}
	jobs := func(in FawkesInput) (n int) {
		for _, a := range in.Accounts {
			n += len(a.Jobs)
		}
		return n
	}
	h.ok(&UpdateSettings{Policy: strp("fawkes")})
	if in := h.f.FawkesInput(h.now); in.Policy != sched.Fawkes || jobs(in) != 2 || len(in.Accounts) != 3 {
		t.Fatalf("under fawkes: policy %v, %d accounts, %d jobs; want fawkes, 3, 2", in.Policy, len(in.Accounts), jobs(in))
	}
	h.ok(&UpdateSettings{Policy: strp("hmrf")})
	if in := h.f.FawkesInput(h.now); in.Policy != sched.HMRF || len(in.Accounts) != 0 || in.Now < h.now {
		t.Fatalf("under hmrf: policy %v, %d accounts, now %v; want hmrf, none, ≥ %v", in.Policy, len(in.Accounts), in.Now, h.now)
	}
}
