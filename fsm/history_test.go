package fsm

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/longfair/longfair/ledger"
)

// historyRun applies, to h, a day and a half of one submission every 7
// minutes to phys and chem in turn, on one node, so β, Ü and SU move.
func historyRun(h *harness) {
	h.setup(1000)
	h.ok(&CreateAccount{Name: "chem"})
	h.ok(&AddMembership{User: "ann", Account: "chem"})
	h.ok(&Grant{ID: "g2", Account: "chem", Amount: 1000 * ledger.MicroPerSU})
	for i := range 36 * 60 / 7 {
		acct := []string{"phys", "chem"}[i%2]
		h.at(time.Duration(i) * 7 * time.Minute).ok(&SubmitJob{Account: acct, User: "ann",
			Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"true"}})
	}
}

// replicaAndRestored are two more FSMs that should hold a's state: one
// that applied a's log in batches of the given sizes, one restored from
// a's snapshot.
func replicaAndRestored(t *testing.T, a *harness, batches []int) (replica, restored *harness) {
	t.Helper()
	replica = newHarness(t)
	replay(t, replica.f, a.log, batches)
	snap, err := a.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	restored = newHarness(t)
	if err := restored.f.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	return replica, restored
}

func TestHistoryIsBoundedDeterministicAndInTheSnapshot(t *testing.T) {
	a := newHarness(t)
	historyRun(a)
	end := a.now

	// Each tier holds one sample per step a command fell in, up to its
	// slots: count them from the log's times.
	for r, tier := range historyTiers {
		steps := map[ledger.Time]bool{}
		for _, e := range a.log.entries {
			env, err := Decode(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			if start := env.Time - env.Time%ledger.Time(tier.step); end.Sub(start) < time.Duration(tier.slots)*tier.step {
				steps[start] = true
			}
		}
		got, err := a.f.History(HistoryResolution(r), 0, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(steps) || len(got) > tier.slots {
			t.Errorf("tier %d holds %d samples, want %d (of at most %d)", r, len(got), len(steps), tier.slots)
		}
		for i, s := range got {
			if i > 0 && s.At <= got[i-1].At {
				t.Fatalf("tier %d: samples out of order at %d", r, i)
			}
		}
		if n := len(got[len(got)-1].Accounts); n != 2 {
			t.Errorf("tier %d's last sample has %d accounts, want phys and chem", r, n)
		}
	}
	minutes, _ := a.f.History(HistoryMinute, 0, end, nil)
	if first := minutes[0].At; end.Sub(first) > time.Hour {
		t.Errorf("the minute tier reaches back %v, more than its hour", end.Sub(first))
	}
	hours, _ := a.f.History(HistoryHour, 0, end, []string{"chem"})
	last := hours[len(hours)-1].Accounts
	if len(last) != 1 || last[0].Account != "chem" || last[0].Pending == 0 {
		t.Errorf("chem's last hourly sample is %+v, want chem alone with tasks pending", last)
	}
	// The first sample is the setup's, before chem existed.
	if len(hours[0].Accounts) != 0 || hours[1].Accounts[0].Available == last[0].Available {
		t.Errorf("chem's hourly samples: first %+v, second %+v, last %+v; want none before chem existed, and SU available falling", hours[0].Accounts, hours[1].Accounts, last)
	}

	// Another replica, applying the same log in other batch sizes, holds
	// the same history; so does a server restored from a snapshot.
	b, c := replicaAndRestored(t, a, []int{7, 1, 64})
	for r := range historyTiers {
		want, _ := a.f.History(HistoryResolution(r), 0, end, nil)
		for name, f := range map[string]*FSM{"replica": b.f, "restored": c.f} {
			got, err := f.History(HistoryResolution(r), 0, end, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("tier %d: the %s's history differs (%v)", r, name, err)
			}
		}
	}
	// After a restore it records on: the next command past the hour
	// adds a sample, as on the source.
	c.log, c.now = a.log, end
	c.at(end.Sub(t0) + time.Hour).ok(&CancelJob{JobID: 1})
	after, _ := c.f.History(HistoryHour, 0, c.now, nil)
	if len(after) != len(hours)+1 {
		t.Errorf("the restored FSM's hour tier has %d samples after an hour more, want %d", len(after), len(hours)+1)
	}
	if _, err := a.f.History(HistoryResolution(9), 0, end, nil); err == nil {
		t.Error("an unknown resolution was accepted")
	}
}

// BenchmarkApplyHistory measures what recording the fairness history adds
// to applying commands: submissions to 1,000 accounts, one every 50 ms of
// command time (so a minute sample, one row per account, every 1,200
// commands), without fsync so that it measures the apply work.
func BenchmarkApplyHistory(b *testing.B) {
	const accounts = 1000
	var perCmd [2]float64
	for i, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "history=off", true: "history=on"}[on], func(b *testing.B) {
			f, err := Open(Options{Dir: b.TempDir(), noSync: true, noHistory: !on})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			l := &log{}
			at := t0
			apply := func(cmd Command) {
				if r := f.Apply(l.add(b, at, cmd)).(*Result); r.Err != nil {
					b.Fatal(r.Err)
				}
			}
			names := make([]string, accounts)
			for k := range names {
				names[k] = fmt.Sprintf("a%04d", k)
				apply(&CreateAccount{Name: names[k]})
				apply(&Grant{Account: names[k], Amount: 1e9 * ledger.MicroPerSU})
			}
			apply(&CreateUser{Name: "ann", Accounts: names})
			apply(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 64, "mem": 256e9}})
			entries := make([]*raft.Log, b.N)
			for k := range entries {
				at = at.Add(50 * time.Millisecond)
				entries[k] = l.add(b, at, &SubmitJob{Account: names[k%accounts], User: "ann", Demand: map[string]float64{"cpu": 1},
					Tasks: 1, Walltime: time.Hour, Command: []string{"true"}})
			}
			b.ResetTimer()
			start := time.Now()
			for k := 0; k < len(entries); k += 64 {
				f.ApplyBatch(entries[k:min(k+64, len(entries))])
			}
			perCmd[i] = float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportMetric(perCmd[i], "ns/command")
			if on && perCmd[0] > 0 {
				b.ReportMetric(perCmd[1]/perCmd[0], "x-without-history")
			}
		})
	}
}
