package fsm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// workload drives an FSM with a seeded random but realistic mix of commands
// — accounts, users, grants, submissions of arrays, scheduling passes by the
// real policy engine (plus stale placements), task starts and exits
// (duplicates included), lost tasks, nodes going down and up, settings
// changes, and malformed or refused commands — and records the log it
// applied, so the same log can be fed to other FSMs.
type workload struct {
	t      testing.TB
	h      *harness
	rng    *rand.Rand
	engine *sched.Engine
}

func newWorkload(t testing.TB, seed uint64) *workload {
	w := &workload{t: t, h: newHarness(t), rng: rand.New(rand.NewPCG(seed, 7)), engine: sched.NewEngine()}
	for i := range 4 {
		w.h.ok(&CreateAccount{Name: fmt.Sprintf("acct%d", i), Weight: f64(float64(i + 1))})
		w.h.ok(&Grant{Account: fmt.Sprintf("acct%d", i), Amount: 5000 * ledger.MicroPerSU})
	}
	for i := range 6 {
		w.h.ok(&CreateUser{Name: fmt.Sprintf("user%d", i), Accounts: []string{fmt.Sprintf("acct%d", i%4)}})
	}
	for i := range 5 {
		w.h.ok(&NodeUp{ID: fmt.Sprintf("node%d", i), Capacity: map[string]float64{"cpu": 16, "mem": 64e9, "mic": float64(i % 2)}, Account: fmt.Sprintf("acct%d", i%4)})
	}
	return w
}

// step applies one random command.
func (w *workload) step() {
	h, r := w.h, w.rng
	// Time mostly moves forward; now and then the leader's stamp goes back
	// (a new leader with a slower clock), which the FSM must absorb.
	h.now = h.now.Add(time.Duration(r.IntN(120)-10) * time.Second)
	switch k := r.IntN(100); {
	case k < 25:
		u := r.IntN(6)
		h.apply(&SubmitJob{
			Account: fmt.Sprintf("acct%d", u%4), User: fmt.Sprintf("user%d", u),
			Demand: map[string]float64{"cpu": float64(1 + r.IntN(4)), "mem": float64(r.IntN(8)) * 1e9, "mic": float64(r.IntN(2) * r.IntN(2))},
			Tasks:  int64(1 + r.IntN(20)), Walltime: time.Duration(1+r.IntN(120)) * time.Minute,
			Command: []string{"/bin/work", fmt.Sprint(r.IntN(100))}, MaxAttempts: r.IntN(4),
			RequestID: w.maybe(fmt.Sprintf("req-%d", r.IntN(40))),
		})
	case k < 45:
		v := h.f.View(h.now)
		ps, err := w.engine.Schedule(v)
		if err != nil {
			w.t.Fatalf("schedule: %v", err)
		}
		if r.IntN(2) == 0 { // the leader's look-ahead pass
			queued, err := sched.NewEngine().LookAhead(v, ps)
			if err != nil {
				w.t.Fatalf("look-ahead: %v", err)
			}
			ps = append(slices.Clone(ps), queued...)
		}
		cmd, err := AssignFor(v, ps)
		if err != nil {
			w.t.Fatal(err)
		}
		if r.IntN(3) == 0 || len(cmd.Placements) == 0 { // stale and bogus placements
			cmd.Placements = append(cmd.Placements, TaskPlacement{JobID: uint64(1 + r.IntN(30)), Task: int64(r.IntN(5)), Node: fmt.Sprintf("node%d", r.IntN(6))})
		}
		h.apply(cmd)
	case k < 75:
		var events []TaskEvent
		for _, id := range sortedTaskIDs(h.f.st.running) {
			a := h.f.st.running[id]
			switch x := r.IntN(10); {
			case x < 3:
				events = append(events, TaskEvent{JobID: a.Job, Task: a.Task, Attempt: a.Attempt, Kind: TaskStarted})
			case x < 6:
				ev := TaskEvent{JobID: a.Job, Task: a.Task, Attempt: a.Attempt, Kind: TaskExited,
					ExitCode: int32(r.IntN(5) / 4), Runtime: time.Duration(r.IntN(7200)) * time.Second}
				if r.IntN(2) == 0 { // a confined worker measured it; peaks often tie
					ev.CPUSeconds, ev.PeakMemBytes = float64(r.IntN(4000)), int64(1+r.IntN(3))<<30
				}
				events = append(events, ev, ev) // duplicate report
			case x < 7:
				events = append(events, TaskEvent{JobID: a.Job, Task: a.Task, Attempt: a.Attempt, Kind: TaskLost})
			}
		}
		if len(events) > 0 {
			h.apply(&TaskEvents{Events: events})
		}
	case k < 80:
		id := fmt.Sprintf("node%d", r.IntN(6))
		if r.IntN(2) == 0 {
			h.apply(&NodeDown{ID: id})
		} else {
			h.apply(&NodeUp{ID: id, Capacity: map[string]float64{"cpu": float64(8 + 8*r.IntN(2)), "mem": 64e9, "mic": 1}, Account: "acct1"})
		}
	case k < 84:
		h.apply(&CancelJob{JobID: uint64(1 + r.IntN(40))})
	case k < 87:
		h.apply(&Grant{ID: w.maybe(fmt.Sprintf("grant-%d", r.IntN(10))), Account: fmt.Sprintf("acct%d", r.IntN(5)), Amount: ledger.SU(1+r.IntN(100)) * ledger.MicroPerSU})
	case k < 89:
		windows := []string{"none", "decay:1h", "sliding:2h", "tumbling:3h"}
		policies := []string{"hmrf", "drf", "ltdrf", "static"}
		h.apply(&UpdateSettings{Window: &windows[r.IntN(len(windows))], Policy: &policies[r.IntN(len(policies))]})
	case k < 91:
		h.apply(&UpdateAccount{Name: fmt.Sprintf("acct%d", r.IntN(5)), Contribution: f64(r.Float64())})
	case k < 93:
		h.apply(&AddMembership{User: fmt.Sprintf("user%d", r.IntN(7)), Account: fmt.Sprintf("acct%d", r.IntN(4))})
	case k < 95:
		// A malformed entry: random bytes, or a valid header with a broken body.
		data := make([]byte, r.IntN(40))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if r.IntN(2) == 0 && len(data) > envelopeHeader {
			data[0], data[1] = CommandVersion, byte(TypeSubmitJob)
		}
		h.f.Apply(h.log.addRaw(data))
	default:
		h.apply(&SubmitJob{Account: "acct0", User: "user0", Demand: map[string]float64{"cpu": 1}, Tasks: 1_000_000,
			Walltime: 24 * time.Hour, Command: []string{"/bin/huge"}}) // refused: not enough SU
	}
}

func (w *workload) maybe(s string) string {
	if w.rng.IntN(2) == 0 {
		return ""
	}
	return s
}

// run applies n random commands and returns the harness.
func (w *workload) run(n int) *harness {
	for range n {
		w.step()
	}
	return w.h
}

// replay applies log entries to f in batches whose sizes come from sizes
// (cycled), and returns the responses.
func replay(t testing.TB, f *FSM, l *log, sizes []int) []any {
	t.Helper()
	var out []any
	for i, k := 0, 0; i < len(l.entries); k++ {
		n := min(sizes[k%len(sizes)], len(l.entries)-i)
		out = append(out, f.ApplyBatch(l.entries[i:i+n])...)
		i += n
	}
	return out
}

func openFSM(t testing.TB, dir string) *FSM {
	t.Helper()
	f, err := Open(Options{Dir: dir, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func digestOf(t testing.TB, f *FSM) [32]byte {
	t.Helper()
	d, err := f.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
