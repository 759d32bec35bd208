package server

import (
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/sched"
)

// fawkesSampleInterval is how often the leader samples the accounts for
// FAWKES weighting. The weighting averages the samples over its interval
// (two minutes by default), so a second is fine-grained enough, and it
// also bounds how long an account that gains work waits for a partition.
const fawkesSampleInterval = time.Second

// fawkesLoop runs FAWKES weighting while the policy is fawkes: it samples
// the accounts every fawkesSampleInterval and commits new partitions
// (fsm.SetShares) when the weighting resizes them or an account gains or
// runs out of work, so that every server's scheduling view carries them.
// Under any other policy it only watches for a switch to fawkes.
func (t *leaderTerm) fawkesLoop() {
	tick := time.NewTicker(fawkesSampleInterval)
	defer tick.Stop()
	var w *fawkesWeighting
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		in := t.s.fsm.FawkesInput(now())
		if in.Policy != sched.Fawkes {
			w = nil
			continue
		}
		if w == nil || !w.fits(&in) {
			// A new policy, configuration or account: the interval starts
			// again from the committed partitions.
			w = newFawkesWeighting(&in)
		}
		d := w.step(&in, t.jobEnding)
		if d.Tick != nil {
			t.log.Debug("fawkes weighting interval ended", "variance", d.Tick.Variance, "threshold", w.cfg.Threshold, "resize", d.Tick.Resize)
		}
		if d.Shares == nil {
			continue
		}
		cmd := sharesCommand(&in, d.Shares)
		if _, err := proposeFor[fsm.SharesInfo](t.ctx, t.s, cmd); err != nil {
			if t.ctx.Err() == nil {
				t.log.Warn("cannot commit the fawkes partitions; retrying at the next sample", "error", err)
			}
			// Start again from what is committed.
			w = nil
			continue
		}
		if d.Tick != nil && d.Tick.Resize {
			t.log.Info("fawkes weighting resized the partitions", "accounts", len(cmd.Shares), "variance", d.Tick.Variance)
		} else {
			t.log.Debug("fawkes partitions follow the accounts with work", "accounts", len(cmd.Shares))
		}
	}
}

// jobEnding says how a job that left the active set ended: its tasks that
// succeeded or failed, and whether it completed rather than was cancelled.
func (t *leaderTerm) jobEnding(id uint64) (done int64, completed, ok bool) {
	j, err := t.s.fsm.Job(id)
	if err != nil {
		return 0, false, false
	}
	return j.Succeeded + j.Failed, j.State == fsm.JobSucceeded || j.State == fsm.JobFailed, true
}
