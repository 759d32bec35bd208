package worker

import (
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ends counts the attempts an agent has ended.
type ends struct {
	mu   sync.Mutex
	n    int
	cond *sync.Cond
}

func newEnds() *ends {
	e := &ends{}
	e.cond = sync.NewCond(&e.mu)
	return e
}

func (e *ends) TaskStarted(uint64, int64, int32, time.Time) {}
func (e *ends) TaskEnded(uint64, int64, int32, int32, time.Duration) {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
	e.cond.Broadcast()
}

func (e *ends) wait(n int) {
	e.mu.Lock()
	for e.n < n {
		e.cond.Wait()
	}
	e.mu.Unlock()
}

// benchWindow is how many attempts run at once: a node's worth of short
// tasks.
const benchWindow = 16

// Task starts per second through the worker's path — assignment, the
// attempt's supervisor (started again from this binary), its cgroup when
// confined, /bin/sh -c true, its end and usage — confined and
// unconfined, and, for scale, the bare fork and exec of /bin/true;
// benchWindow at a time. The three take turns window by window, so that
// the load of a shared machine, which moves these figures by a third
// from one minute to the next, weighs on each alike. confined/unconfined
// is what confinement leaves of the start rate (the goal: at
// least 0.8).
func BenchmarkTaskStarts(b *testing.B) {
	unconfinedObs, confinedObs := newEnds(), newEnds()
	unconfined := newTestAgent(b, func(c *Config) { c.Observer = unconfinedObs })
	confined := confinedAgent(b, func(c *Config) { c.Observer = confinedObs })
	window := func(ag *Agent, obs *ends, from, n int) time.Duration {
		start := time.Now()
		for j := range n {
			ag.assign(asg(1, int64(from+j), 1, "true", time.Minute, map[string]float64{"cpu": 1, "mem": 64 << 20}))
		}
		obs.wait(from + n)
		return time.Since(start)
	}
	bare := func(n int) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command("/bin/true")
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Run(); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var tu, tc, tb time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i += benchWindow {
		n := min(benchWindow, b.N-i)
		tu += window(unconfined, unconfinedObs, i, n)
		tc += window(confined, confinedObs, i, n)
		tb += bare(n)
	}
	b.StopTimer()
	rate := func(d time.Duration) float64 { return float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(tu), "unconfined-starts/s")
	b.ReportMetric(rate(tc), "confined-starts/s")
	b.ReportMetric(rate(tb), "bare-exec/s")
	b.ReportMetric(rate(tc)/rate(tu), "confined/unconfined")
}
