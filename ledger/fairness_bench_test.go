package ledger

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchStream is an endless, deterministic event stream over many accounts:
// every event starts a task for one account, ends that account's oldest
// running task and looks at the account, as the FSM and the scheduler do.
type benchStream struct {
	names   []string
	demands []Vector
	running [][]benchTask // per account, a ring of running tasks
	next    []int         // per account, the ring slot of its oldest task
	i       int
	now     Time
	step    time.Duration
}

type benchTask struct {
	demand  Vector
	started Time
}

const benchRunningPerAccount = 8

func newBenchStream(b *FairnessBook, accounts int, step time.Duration) *benchStream {
	s := &benchStream{now: unixBase, step: step, next: make([]int, accounts)}
	for k := range 8 {
		s.demands = append(s.demands, Vector{float64(1 + k%4), float64(k+1) * 4e9, float64(k % 2)})
	}
	for a := range accounts {
		s.names = append(s.names, "account-"+strconv.Itoa(a))
		ring := make([]benchTask, benchRunningPerAccount)
		for k := range ring {
			ring[k] = benchTask{s.demands[(a+k)%len(s.demands)], s.now}
			b.TaskStarted(s.names[a], ring[k].demand, s.now)
		}
		s.running = append(s.running, ring)
	}
	return s
}

// event runs one event against b and returns a figure so the look is used.
// With into set it looks through AccountInto, reusing into's vectors.
func (s *benchStream) event(b *FairnessBook, into *AccountFairness) float64 {
	s.i++
	s.now = s.now.Add(s.step)
	a := (s.i * 7919) % len(s.names) // a prime stride visits accounts in a scattered order
	name := s.names[a]
	slot := s.next[a]
	old := s.running[a][slot]
	d := s.demands[s.i%len(s.demands)]
	b.TaskStarted(name, d, s.now)
	b.TaskEnded(name, old.demand, old.started, s.now)
	s.running[a][slot] = benchTask{d, s.now}
	s.next[a] = (slot + 1) % benchRunningPerAccount
	if into != nil {
		b.AccountInto(name, s.now, into)
		return into.Usage[0]
	}
	return b.Account(name, s.now).Usage[0]
}

// BenchmarkFairnessBookEvents measures one event (TaskStarted + TaskEnded +
// Account) per window with 1,000 accounts, after a warm-up long enough to
// fill every window's history. With one event per second over 1,000
// accounts each account sees an event every ~17 minutes, so a 24h sliding
// window holds ~86 ended entries per account.
func BenchmarkFairnessBookEvents(b *testing.B) { benchmarkEvents(b, false) }

// BenchmarkFairnessBookEventsInto is the same stream looking through
// AccountInto, as a scheduler pass that reuses its vectors does.
func BenchmarkFairnessBookEventsInto(b *testing.B) { benchmarkEvents(b, true) }

func benchmarkEvents(b *testing.B, reuse bool) {
	const (
		accounts = 1000
		batch    = 10_000 // events per benchmark iteration, so -benchtime 1x still measures
		warmup   = 200 * accounts
	)
	windows := []Window{
		{Kind: WindowNone},
		{WindowTumbling, 24 * time.Hour},
		{WindowSliding, 24 * time.Hour},
		{WindowDecay, 7 * 24 * time.Hour},
	}
	for _, w := range windows {
		b.Run(fmt.Sprint(w), func(b *testing.B) {
			book := NewFairnessBook(w, 3)
			stream := newBenchStream(book, accounts, time.Second)
			var into *AccountFairness
			if reuse {
				into = &AccountFairness{}
			}
			sink := 0.0
			for range warmup {
				sink += stream.event(book, into)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for range batch {
					sink += stream.event(book, into)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			events := float64(b.N) * batch
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
			if sink < 0 {
				b.Fatal("negative usage")
			}
		})
	}
}
