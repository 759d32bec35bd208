package sim

import (
	"fmt"
	"slices"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Config says how to replay a workload.
type Config struct {
	// Settings are the policy settings the engine runs with.
	Settings sched.Settings
	// Window is the fairness book's window; the zero Window is none.
	Window ledger.Window
	// MaxSamples bounds the β-over-time samples kept (about; 0 means 1000).
	MaxSamples int
	// Trace, when set, is told every arrival, task start and task end, in
	// the order the replay applies them. The experiments that replay
	// several policies at once (CompareBPF, QKnoblerSweep) call it for one
	// event at a time, the replays' events interleaved.
	Trace func(TraceEvent)

	// everyPass turns off skipping passes that provably place nothing; tests
	// use it to check that skipping changes nothing.
	everyPass bool
}

// Run replays the workload under cfg and reports what happened. It runs
// until every job has completed or can never run (or until the workload's
// horizon), driven by events only: time jumps from one arrival or
// completion to the next, and a scheduling pass runs only when resources
// were freed or work arrived.
func Run(w *Workload, cfg Config) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Settings.Validate(w.Resources); err != nil {
		return nil, fmt.Errorf("policy settings: %w", err)
	}
	if err := cfg.Window.Validate(); err != nil {
		return nil, fmt.Errorf("fairness window: %w", err)
	}
	r := newReplay(w, cfg)
	for {
		t, ok := r.nextTime()
		if !ok || (w.Horizon > 0 && t >= w.Horizon) {
			break
		}
		if woke, err := r.fawkesWake(t); err != nil { // weighting_replay.go: a weighting interval ended before t
			return nil, err
		} else if woke {
			continue
		}
		r.advanceTo(t)
		if err := r.step(t); err != nil {
			return nil, err
		}
	}
	return r.finish(), nil
}

// nextTime is the time of the next event, if any.
func (r *replay) nextTime() (ledger.Time, bool) {
	var t ledger.Time
	ok := false
	if r.next < len(r.order) {
		t, ok = r.w.Jobs[r.order[r.next]].Submit, true
	}
	if r.events.len() > 0 && (!ok || r.events.top().at < t) {
		t, ok = r.events.top().at, true
	}
	return t, ok
}

// advanceTo integrates utilization and closes the slots that ended by t.
func (r *replay) advanceTo(t ledger.Time) {
	if r.begun && t > r.lastT {
		r.used.AddScaled(r.running, t.Sub(r.lastT).Seconds())
	}
	r.lastT = t
	r.slots.flush(r, t)
}

// step applies everything that happens at time t and schedules once.
func (r *replay) step(t ledger.Time) error {
	r.now = t
	r.view.Now = t
	changed := false
	r.arrivals = r.arrivals[:0]
	for r.events.len() > 0 && r.events.top().at == t {
		e := r.events.pop()
		r.nEvents++
		if e.kind == evArrive {
			r.arrivals = append(r.arrivals, int(e.job))
			continue
		}
		r.complete(e)
		changed = true
	}
	// Completions may submit dependents with no delay: they arrive now.
	for r.events.len() > 0 && r.events.top().at == t {
		e := r.events.pop()
		r.nEvents++
		r.arrivals = append(r.arrivals, int(e.job))
	}
	for r.next < len(r.order) && r.w.Jobs[r.order[r.next]].Submit == t {
		r.arrivals = append(r.arrivals, r.order[r.next])
		r.next++
		r.nEvents++
	}
	// Same-time arrivals queue in workload order, whatever made them.
	slices.Sort(r.arrivals)
	for _, j := range r.arrivals {
		if r.arrive(j) {
			changed = true
		}
	}
	r.updateBaselines()
	if changed && r.pending > 0 && (r.cfg.everyPass || r.mayPlace()) {
		if err := r.pass(); err != nil {
			return err
		}
	}
	if err := r.fawkesSettled(t); err != nil { // weighting_replay.go
		return err
	}
	for _, n := range r.freed {
		r.freedMark[n] = false
	}
	r.freed, r.newHeads, r.fitCounts = r.freed[:0], r.newHeads[:0], r.fitCounts[:0]
	r.sampler.maybe(r, t)
	r.trace(TraceEvent{Kind: Settled, Time: t})
	return nil
}

func (r *replay) trace(e TraceEvent) {
	if r.cfg.Trace != nil {
		r.cfg.Trace(e)
	}
}

func (r *replay) touch(a int) {
	if !r.touchedMark[a] {
		r.touchedMark[a] = true
		r.touched = append(r.touched, a)
	}
}
