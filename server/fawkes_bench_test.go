package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// BenchmarkFawkesSample measures one sample of the leader's FAWKES
// weighting (it samples every second under fawkes) on a cluster of 1,000
// accounts with 20 active jobs each, and reports it in µs per sample.
func BenchmarkFawkesSample(b *testing.B) {
	const accounts, jobs = 1000, 20
	in := &fsm.FawkesInput{
		Policy: sched.Fawkes, Config: fawkes.Config{Weighting: fawkes.JS}, Resources: []string{"cpu", "mem"},
		Capacity: ledger.Vector{100_000, 400e12},
	}
	id := uint64(0)
	for a := range accounts {
		acct := fsm.FawkesAccount{Name: fmt.Sprintf("acct%04d", a), Weight: 1, Share: 1.0 / accounts, Running: ledger.Vector{40, 160e9}}
		for range jobs {
			id++
			acct.Jobs = append(acct.Jobs, fsm.FawkesJob{
				ID: id, Demand: ledger.Vector{2, 8e9}, Walltime: time.Hour, Pending: 10, Running: 2, Done: 3,
			})
		}
		in.Accounts = append(in.Accounts, acct)
	}
	w := newFawkesWeighting(in)
	b.ResetTimer()
	for i := range b.N {
		in.Now = ledger.Time(time.Duration(i) * time.Second)
		w.step(in, neverEnded)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/sample")
}
