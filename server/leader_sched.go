package server

import (
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// scheduleLoop runs the policy engine on the FSM's view and commits what
// it places, one Assign command per pass. It runs when tasks arrive, end
// or are lost, when nodes come up, when a worker becomes ready, and every
// passInterval. Triggers only mark the loop dirty: however many arrive
// while a pass runs, one more pass serves them all, so a 10,000-task array
// is scheduled in a pass or a few, not 10,000.
func (t *leaderTerm) scheduleLoop() {
	w := t.s.fsm.Watch()
	defer w.Close()
	engine, ahead := sched.NewEngine(), sched.NewEngine()
	tick := time.NewTicker(passInterval)
	defer tick.Stop()
	dirty := true
	var last time.Time
	for {
		if dirty {
			if gap := minPassGap - time.Since(last); gap > 0 {
				select {
				case <-t.ctx.Done():
					return
				case <-time.After(gap):
				}
			}
			last = time.Now()
			dirty = t.pass(engine, ahead)
			if dirty {
				continue
			}
		}
		select {
		case <-t.ctx.Done():
			return
		case <-w.C():
			changes := w.Take()
			if changes.Has(fsm.TypeCancelJob) || changes.Has(fsm.TypeRequeueJob) || changes.Has(fsm.TypeHoldJob) || changes.Has(fsm.TypeUpdateJob) {
				t.requestSweep(true)
			}
			// The loop's own Assign commits need no new pass: a pass
			// places all it can, and says so when it could not. Task
			// events come from this term's event committer, which kicks
			// the loop when an attempt ended, or a queued one started.
			dirty = changes&^(1<<fsm.TypeAssign|1<<fsm.TypeTaskEvents) != 0
		case <-t.schedule:
			dirty = true
		case <-tick.C:
			dirty = true
		}
	}
}

// pass runs one scheduling pass; it reports whether another should follow
// at once (it placed tasks, or had more placements than one command holds).
// With look-ahead on, what the policy's pass could not place fills the
// look-ahead queues of the nodes it left full (lookAhead), in the same
// Assign.
func (t *leaderTerm) pass(engine, ahead *sched.Engine) (again bool) {
	if len(t.readyConns()) == 0 {
		return false
	}
	start := time.Now()
	v := t.passView(ledger.Time(start.UnixNano()))
	if len(v.Nodes) == 0 || !hasPending(v) {
		return false
	}
	placements, err := engine.Schedule(v)
	if err != nil {
		t.log.Error("scheduling pass failed", "error", err)
		return false
	}
	truncated := len(placements) > fsm.MaxBatch
	placements = placements[:min(len(placements), fsm.MaxBatch)]
	if !truncated && t.s.cfg.LookAhead {
		placements = t.lookAhead(ahead, v, placements)
	}
	t.s.metrics.ObservePass(time.Since(start), len(placements))
	if len(placements) == 0 {
		return false
	}
	cmd, err := fsm.AssignFor(v, placements)
	if err != nil {
		t.log.Error("scheduling pass made a placement outside its view", "error", err)
		return false
	}
	addCredentials(cmd)
	res, err := proposeFor[*fsm.AssignResult](t.ctx, t.s, cmd)
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("cannot commit a scheduling pass; retrying on the next trigger", "placements", len(cmd.Placements), "error", err)
		}
		return false
	}
	if len(res.Dropped) > 0 {
		t.s.metrics.ObserveDropped(len(res.Dropped))
		t.log.Debug("the ledger dropped stale placements", "dropped", len(res.Dropped), "first_reason", res.Dropped[0].Reason)
	}
	t.deliverPlaced(res.Accepted)
	return truncated || len(res.Dropped) > 0 && len(res.Accepted) > 0
}

// lookAhead appends to a pass's placements over v those of a look-ahead
// pass (sched.Engine.LookAhead), up to what one Assign holds.
func (t *leaderTerm) lookAhead(ahead *sched.Engine, v *sched.View, placed []sched.Placement) []sched.Placement {
	queued, err := ahead.LookAhead(v, placed)
	if err != nil {
		t.log.Error("look-ahead pass failed", "error", err)
		return placed
	}
	return append(placed, queued[:min(len(queued), fsm.MaxBatch-len(placed))]...)
}

// passView is the view a pass schedules on at now: the FSM's view, after
// the task ends on their way to the log, with only the nodes whose worker
// is ready, since only those can be told.
// Jobs.ExplainJob explains over it too.
func (t *leaderTerm) passView(now ledger.Time) *sched.View {
	ready := t.readyConns()
	usable := make(map[string]bool, len(ready))
	for _, c := range ready {
		usable[c.node] = true
	}
	v := t.s.fsm.ViewAfter(now, t.ending.list())
	nodes := v.Nodes[:0]
	for _, n := range v.Nodes {
		if usable[n.ID] {
			nodes = append(nodes, n)
		}
	}
	v.Nodes = nodes
	return v
}

func hasPending(v *sched.View) bool {
	for i := range v.Accounts {
		for _, j := range v.Accounts[i].Queue {
			if j.Pending > 0 {
				return true
			}
		}
	}
	return false
}
