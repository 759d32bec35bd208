package worker

import (
	"context"
	"strconv"
	"strings"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Simulated workers. A worker with Config.Simulate runs no process: an
// attempt "runs" for the seconds its command sleeps (`sleep N`; any other
// command ends at once, exit 0), capped at its walltime, and is reported
// started and ended as a real one is. Everything else is real: the gossip
// pool, the stream to the leader, heartbeats, leases, the event batches
// and their acknowledgements. It is for measuring the control plane with
// far more nodes than a machine can run workers for (the load generator
// of e2e/bench_scale_test.go); Crash stops one as a kill -9 would. A
// simulated attempt has no supervisor, so nothing fences it.

// simulate runs attempt a without a process.
func (ag *Agent) simulate(a *attempt, startCtx context.Context) {
	defer ag.wg.Done()
	started := time.Now()
	member := isMember(a.asg)
	if !member {
		ag.tasks.event(a, &longfairv1.TaskEvent{Kind: longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED})
	}
	k := a.key
	if o := ag.cfg.Observer; o != nil {
		o.TaskStarted(k.job, k.task, k.attempt, started)
	}
	code := int32(0)
	if d := simulatedRuntime(a.asg); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-startCtx.Done(): // stopped: as a SIGTERM would end it
			t.Stop()
			code = 128 + 15
		}
	} else if startCtx.Err() != nil {
		code = 128 + 15
	}
	if member {
		ag.tasks.ended(a)
		return
	}
	ag.finish(a, code, max(time.Since(started), time.Nanosecond), nil)
}

// simulatedRuntime is how long a simulated attempt runs: N seconds for a
// command `sleep N`, capped at its walltime; zero for anything else.
func simulatedRuntime(asg *longfairv1.Assignment) time.Duration {
	f := strings.Fields(strings.Join(asg.GetCommand(), " "))
	if len(f) != 2 || f[0] != "sleep" {
		return 0
	}
	s, err := strconv.ParseFloat(f[1], 64)
	if err != nil || s <= 0 {
		return 0
	}
	d := time.Duration(s * float64(time.Second))
	if w := asg.GetWalltime().AsDuration(); w > 0 {
		d = min(d, w)
	}
	return d
}

// Crash stops the agent at once, as kill -9 of its process would: no
// goodbye to the leader, no leaving the gossip pool, its stream and
// listeners closed. Its attempts are ended without a report. For
// simulated workers (the load generator), whose process is not their
// own; a real worker is killed.
func (ag *Agent) Crash() {
	ag.stopOnce.Do(func() {
		ag.tasks.mu.Lock()
		ag.tasks.closed = true
		for _, a := range ag.tasks.attempts {
			a.report = false
			if a.cancelStart != nil {
				a.cancelStart()
			}
		}
		ag.tasks.mu.Unlock()
		if ag.cancelRun != nil {
			ag.cancelRun()
		}
		ag.supervisors.close()
		if ag.gossip != nil {
			_ = ag.gossip.leave(0, false)
		}
		if ag.grpc != nil {
			ag.grpc.Stop()
		}
		ag.loops.Wait()
		if ag.leaders != nil {
			ag.leaders.close()
		}
	})
}
