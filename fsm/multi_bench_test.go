package fsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/longfair/longfair/ledger"
)

// BenchmarkApplySubmitMulti measures one-task submissions per second
// through ApplyBatch with the production store settings, when the leader
// groups them: each ApplyBatch gets one multi-command entry of size
// commands ("multi"), or size single-command entries ("single", what raft
// hands over when it batches entries itself).
func BenchmarkApplySubmitMulti(b *testing.B) {
	for _, size := range []int{16, 64} {
		for _, kind := range []string{"single", "multi"} {
			b.Run(fmt.Sprintf("%s/size=%d", kind, size), func(b *testing.B) {
				f, err := Open(Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				l := &log{}
				at := t0
				for _, cmd := range []Command{
					&CreateAccount{Name: "phys"},
					&CreateUser{Name: "ann", Accounts: []string{"phys"}},
					&Grant{Account: "phys", Amount: 1e12 * ledger.MicroPerSU},
				} {
					f.Apply(l.add(b, at, cmd))
				}
				var batches [][]*raft.Log
				for i := 0; i < b.N; i += size {
					var parts [][]byte
					for range min(size, b.N-i) {
						at = at.Add(time.Millisecond)
						parts = append(parts, rawCommand(b, at, &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1, "mem": 2e9},
							Tasks: 1, Walltime: time.Hour, Command: []string{"/bin/sim", "--input", "data.h5"}}))
					}
					if kind == "multi" {
						batches = append(batches, []*raft.Log{l.addRaw(rawMulti(parts))})
						continue
					}
					var batch []*raft.Log
					for _, p := range parts {
						batch = append(batch, l.addRaw(p))
					}
					batches = append(batches, batch)
				}
				b.ResetTimer()
				start := time.Now()
				for _, batch := range batches {
					for _, resp := range f.ApplyBatch(batch) {
						rs, ok := resp.(Results)
						if !ok {
							rs = Results{resp.(*Result)}
						}
						for _, r := range rs {
							if r.Err != nil {
								b.Fatal(r.Err)
							}
						}
					}
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submits/s")
			})
		}
	}
}
