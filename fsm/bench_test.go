package fsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/longfair/longfair/ledger"
)

// BenchmarkApplySubmit measures committed submissions per second through
// ApplyBatch with the production store settings (fsync on every commit).
// Raft hands the FSM what committed together; batch is that size.
func BenchmarkApplySubmit(b *testing.B) {
	for _, c := range []struct {
		tasks int64
		batch int
	}{{1, 1}, {1, 64}, {1000, 1}, {1000, 64}} {
		b.Run(fmt.Sprintf("tasks=%d/batch=%d", c.tasks, c.batch), func(b *testing.B) {
			f, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			l := &log{}
			at := t0
			setup := []Command{
				&CreateAccount{Name: "phys"},
				&CreateUser{Name: "ann", Accounts: []string{"phys"}},
				&Grant{Account: "phys", Amount: 1e12 * ledger.MicroPerSU},
				&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 64, "mem": 256e9}},
			}
			for _, cmd := range setup {
				f.Apply(l.add(b, at, cmd))
			}
			entries := make([]*raft.Log, b.N)
			for i := range entries {
				at = at.Add(time.Millisecond)
				entries[i] = l.add(b, at, &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1, "mem": 2e9},
					Tasks: c.tasks, Walltime: time.Hour, Command: []string{"/bin/sim", "--input", "data.h5"}})
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < len(entries); i += c.batch {
				for _, resp := range f.ApplyBatch(entries[i:min(i+c.batch, len(entries))]) {
					if r := resp.(*Result); r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/secs, "submits/s")
			b.ReportMetric(float64(b.N)*float64(c.tasks)/secs, "tasks/s")
		})
	}
}

// BenchmarkApplyAssignExit applies placements and exits of fractional-core
// tasks: the path that takes demands out of node free vectors and gives
// them back (state.take, state.give) and prices each charge; without fsync,
// so that it measures the apply work rather than the disk.
func BenchmarkApplyAssignExit(b *testing.B) {
	f, err := Open(Options{Dir: b.TempDir(), noSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	l := &log{}
	at := t0
	apply := func(cmd Command) {
		at = at.Add(time.Millisecond)
		if r := f.Apply(l.add(b, at, cmd)).(*Result); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	apply(&CreateAccount{Name: "phys"})
	apply(&CreateUser{Name: "ann", Accounts: []string{"phys"}})
	apply(&Grant{Account: "phys", Amount: 1e12 * ledger.MicroPerSU})
	apply(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 64, "mem": 256 << 30}})
	const batch = 64
	apply(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 0.25, "mem": 2 << 30},
		Tasks: int64(b.N+1) * batch, Walltime: time.Hour, Command: []string{"/bin/sim"}})
	b.ResetTimer()
	for i := range b.N {
		ps := make([]TaskPlacement, batch)
		evs := make([]TaskEvent, batch)
		for k := range ps {
			task := int64(i*batch + k)
			ps[k] = TaskPlacement{JobID: 1, Task: task, Node: "n1"}
			evs[k] = TaskEvent{JobID: 1, Task: task, Attempt: 1, Kind: TaskExited, Runtime: time.Minute}
		}
		apply(&Assign{Placements: ps})
		apply(&TaskEvents{Events: evs})
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "tasks/s")
}
