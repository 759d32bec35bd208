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
