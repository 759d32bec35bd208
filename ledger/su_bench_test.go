package ledger

import (
	"fmt"
	"testing"
	"time"
)

// benchSUAccounts is the number of accounts in the book benchmarks.
const benchSUAccounts = 10_000

// newBenchSUBook returns a book with benchSUAccounts accounts, each with an
// expiring and a permanent grant, and the account names.
func newBenchSUBook(b *testing.B) (*SUBook, []string) {
	book := NewSUBook()
	names := make([]string, benchSUAccounts)
	for i := range names {
		names[i] = fmt.Sprintf("acct%05d", i)
		if _, err := book.Grant(names[i]+"/y1", names[i], wholeSU(1_000_000), 1<<60, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := book.Grant(names[i]+"/base", names[i], wholeSU(1_000_000), 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	return book, names
}

// BenchmarkHoldChargeRelease measures one job's SU life cycle (hold at
// submission, one detailed task charge, release at the end) in a book of
// 10,000 accounts. Each iteration runs one cycle per account on a fresh
// book, so memory stays bounded and -benchtime 1x still measures 10,000
// cycles.
func BenchmarkHoldChargeRelease(b *testing.B) {
	w := BillingWeights{1, 0.25 / (1 << 30), 10}
	detail := ChargeDetail{Runtime: 90 * time.Minute, Demand: Vector{16, 64 << 30, 0}, Weights: w}
	cost, err := Cost(detail.Runtime, detail.Demand, w, BillingSum)
	if err != nil {
		b.Fatal(err)
	}
	hold, err := WorstCaseHold(1, 2*time.Hour, detail.Demand, w, BillingSum)
	if err != nil {
		b.Fatal(err)
	}
	var cycles int
	var elapsed time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		book, names := newBenchSUBook(b)
		ids := make([]string, len(names))
		for i, n := range names {
			ids[i] = n + "/job"
		}
		b.StartTimer()
		start := time.Now()
		at := Time(1)
		for i, acct := range names {
			if _, err := book.Hold(ids[i], acct, hold, at); err != nil {
				b.Fatal(err)
			}
			if _, err := book.Charge(ids[i], ids[i], cost, detail, at+1); err != nil {
				b.Fatal(err)
			}
			if _, err := book.Release(ids[i], at+2); err != nil {
				b.Fatal(err)
			}
			at += 3
		}
		elapsed += time.Since(start)
		cycles += len(names)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(cycles), "ns/cycle")
	b.ReportMetric(float64(cycles)/elapsed.Seconds(), "cycles/s")
}

// BenchmarkVerify measures how fast Verify checks a journal (chain, replay
// and balances) of 30,000 entries over 10,000 accounts.
func BenchmarkVerify(b *testing.B) {
	book, names := newBenchSUBook(b)
	for i, acct := range names[:benchSUAccounts/3] {
		id := fmt.Sprint("job", i)
		if _, err := book.Hold(id, acct, wholeSU(10), 1); err != nil {
			b.Fatal(err)
		}
		if _, err := book.Charge(id, id+".0", wholeSU(4), ChargeDetail{}, 2); err != nil {
			b.Fatal(err)
		}
		if _, err := book.Release(id, 3); err != nil {
			b.Fatal(err)
		}
	}
	journal := mustRead(book.Journal())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Verify(journal); err != nil {
			b.Fatal(err)
		}
	}
	entries := float64(len(journal)) * float64(b.N)
	b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkCost measures the exact cost computation of a three-resource
// task.
func BenchmarkCost(b *testing.B) {
	w := BillingWeights{1, 0.25 / (1 << 30), 10}
	d := Vector{16, 64 << 30, 1}
	b.ReportAllocs()
	for range b.N {
		if _, err := Cost(90*time.Minute, d, w, BillingSum); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/cost")
}
