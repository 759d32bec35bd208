package server

import (
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// sweepLoop re-checks, every sweepInterval and when asked, that every
// connected worker holds what the ledger placed on its node; after a job
// is cancelled it also stops that job's running attempts.
func (t *leaderTerm) sweepLoop() {
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		withCancel := false
		select {
		case <-t.ctx.Done():
			return
		case withCancel = <-t.sweeps:
		case <-tick.C:
		}
		conns := t.readyConns()
		if len(conns) == 0 {
			continue
		}
		// One read of the ledger for every node.
		byNode := make(map[string]map[attemptKey]fsm.TaskInfo)
		for _, ti := range t.s.fsm.Running("") {
			for _, node := range taskNodes(ti) {
				m := byNode[node]
				if m == nil {
					m = make(map[attemptKey]fsm.TaskInfo)
					byNode[node] = m
				}
				m[keyOfTask(ti)] = ti
			}
		}
		for _, c := range conns {
			t.sweepActive(c, byNode[c.node], withCancel)
		}
	}
}

// sweepConn sends a worker the attempts placed on its node that its
// stream has not carried yet, forgets attempts that have ended, and, with
// withCancel, tells it to stop attempts of cancelled jobs.
func (t *leaderTerm) sweepConn(c *workerConn, withCancel bool) {
	t.sweepActive(c, t.activeOn(c.node), withCancel)
}

// sweepActive is sweepConn with the node's active attempts already read.
func (t *leaderTerm) sweepActive(c *workerConn, active map[attemptKey]fsm.TaskInfo, withCancel bool) {
	now := time.Now()
	var missing []fsm.TaskInfo
	var endedParallel []*longfairv1.AttemptRef
	c.mu.Lock()
	for k, ended := range c.delivered {
		switch _, ok := active[k]; {
		case ok:
		case ended.IsZero():
			c.delivered[k] = now
			if _, ok := c.parallel[k]; ok {
				endedParallel = append(endedParallel, k.ref())
			}
		case now.Sub(ended) > deliveredLinger:
			delete(c.delivered, k)
			delete(c.killed, k)
			delete(c.parallel, k)
		}
	}
	for k, ti := range active {
		if _, ok := c.delivered[k]; !ok {
			missing = append(missing, ti)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		t.deliverTasks(c, missing)
	}
	stopEndedParallel(c, endedParallel)
	if withCancel {
		t.stopCancelled(c, active)
	}
}

// stopCancelled tells a worker to stop its attempts whose job was
// cancelled, and those a RequeueJob marked. Their exit is reported: they
// are charged for the time they ran (and the requeued ones run again).
func (t *leaderTerm) stopCancelled(c *workerConn, active map[attemptKey]fsm.TaskInfo) {
	cancelled := make(map[uint64]bool)
	var stop []*longfairv1.AttemptRef
	requeued := 0
	for k, ti := range active {
		is, seen := cancelled[k.job]
		if !seen {
			j, err := t.s.fsm.Job(k.job)
			is = err == nil && j.CancelledAt != 0
			cancelled[k.job] = is
		}
		if !is && !ti.Requeue {
			continue
		}
		if !is {
			requeued++
		}
		c.mu.Lock()
		_, sent := c.killed[k]
		c.killed[k] = struct{}{}
		c.mu.Unlock()
		if !sent {
			stop = append(stop, k.ref())
		}
	}
	if len(stop) == 0 {
		return
	}
	t.log.Info("stopping attempts of cancelled or requeued jobs", "node", c.node, "attempts", len(stop), "requeued", requeued)
	c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Kill{Kill: &longfairv1.Kill{
		Attempts: stop, Report: true, Reason: "the job was cancelled or requeued",
	}}})
}
