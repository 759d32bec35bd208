package sim

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
)

// replayHooks let the DFF and FAWKES experiments of this package steer a
// replay beyond what Config offers: arrange the accounts in a tree, wake the
// replay at times of their own (FAWKES's weighting interval), and look at
// the replay after every step.
type replayHooks struct {
	// setup runs once the replay is built, before any event.
	setup func(r *replay)
	// wake is the next time the hooks need the replay to stop at, if any.
	wake func(r *replay) (ledger.Time, bool)
	// woken runs at a wake time, after the replay advanced to it and
	// before the events of that time; it reports whether a scheduling pass
	// should follow.
	woken func(r *replay, t ledger.Time) bool
	// settled runs after every step (and wake); it reports whether another
	// pass should run at the same time.
	settled func(r *replay, t ledger.Time) bool
	// done runs once the replay has finished, with its result.
	done func(r *replay, res *Result)
}

// runHooked replays the workload like Run, with the hooks.
func runHooked(w *Workload, cfg Config, h replayHooks) (*Result, error) {
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
	if h.setup != nil {
		h.setup(r)
	}
	for {
		t, ok := r.nextTime()
		if !ok || (w.Horizon > 0 && t >= w.Horizon) {
			break
		}
		if h.wake != nil {
			if wt, wok := h.wake(r); wok && wt <= t && r.begun {
				r.advanceTo(wt)
				r.now, r.view.Now = wt, wt
				again := h.woken(r, wt)
				if err := r.settle(h, wt, again); err != nil {
					return nil, err
				}
				continue
			}
		}
		r.advanceTo(t)
		if err := r.step(t); err != nil {
			return nil, err
		}
		if err := r.settle(h, t, false); err != nil {
			return nil, err
		}
	}
	res := r.finish()
	if h.done != nil {
		h.done(r, res)
	}
	return res, nil
}

// settle runs the settled hook and the extra passes the hooks ask for.
func (r *replay) settle(h replayHooks, t ledger.Time, pass bool) error {
	for range 3 { // a pass never changes which accounts have work, so one more is enough
		if pass && r.pending > 0 {
			r.updateBaselines()
			if err := r.pass(); err != nil {
				return err
			}
		}
		if h.settled == nil {
			return nil
		}
		if pass = h.settled(r, t); !pass {
			return nil
		}
	}
	return nil
}

// activeAccount reports whether account a has work: tasks pending or
// running.
func (r *replay) activeAccount(a int) bool {
	return r.accts[a].pending > 0 || r.accts[a].runningTasks > 0
}
