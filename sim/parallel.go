package sim

import (
	"runtime"
	"sync"
)

// InParallel runs run(0) … run(n−1), up to GOMAXPROCS at a time, and
// waits for all of them. The experiments and `longfair sim` use it to replay one
// workload under several policies at once: each replay is independent and
// deterministic, so running them together changes only how long it takes.
func InParallel(n int, run func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			run(i)
		}()
	}
	wg.Wait()
}

// Serialized returns trace guarded by a mutex (nil when trace is nil), so
// that replays running in parallel can share the caller's Config.Trace,
// which is written for one replay at a time. Events of different replays
// interleave.
func Serialized(trace func(TraceEvent)) func(TraceEvent) {
	if trace == nil {
		return nil
	}
	var mu sync.Mutex
	return func(e TraceEvent) {
		mu.Lock()
		defer mu.Unlock()
		trace(e)
	}
}
