package server

import (
	"fmt"
	"slices"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// reconcile brings a worker that just connected and the ledger into
// agreement, then welcomes it:
//
//  1. the events it could not get acknowledged before are committed (the
//     ledger ignores those it has already applied);
//  2. attempts the ledger holds active on its node that it does not hold
//     are either sent again — when the worker is the same process and
//     the attempt never started, so it never received it — or marked
//     lost, charged up to now and requeued;
//  3. attempts it runs that the ledger does not hold active (a partitioned
//     worker whose node was declared down) are killed without a report;
//  4. attempts of cancelled jobs it runs are stopped.
//
// Only then is the stream ready: before, the worker gets no assignments
// and its node gets no placements.
func (t *leaderTerm) reconcile(c *workerConn, h *longfairv1.WorkerHello) error {
	active := t.activeOn(c.node)
	var pending []fsm.TaskEvent
	var ackSeq uint64
	for _, e := range h.GetPending() {
		ackSeq = max(ackSeq, e.GetSeq())
		ev, err := taskEventFromProto(e)
		if err != nil {
			t.log.Warn("dropping a malformed event from a worker", "node", c.node, "error", err)
			continue
		}
		// Only attempts the ledger placed on this node are the worker's to
		// report; anything else is stale and the ledger would ignore it.
		if _, ok := active[attemptKey{ev.JobID, ev.Task, ev.Attempt}]; ok {
			pending = append(pending, ev)
		}
	}
	if len(pending) > 0 {
		if _, err := proposeFor[*fsm.EventsResult](t.ctx, t.s, &fsm.TaskEvents{Events: pending}); err != nil {
			return fmt.Errorf("commit the worker's pending events: %w", err)
		}
		active = t.activeOn(c.node)
	}

	held := make(map[attemptKey]bool, len(h.GetHeld()))
	for _, ha := range h.GetHeld() {
		held[keyOfRef(ha.GetAttempt())] = ha.GetRunning()
	}
	var lost []fsm.TaskEvent
	var resend []fsm.TaskInfo
	c.mu.Lock()
	for k, ti := range active {
		if _, ok := held[k]; ok {
			c.delivered[k] = time.Time{}
			if len(ti.Nodes) > 1 {
				c.parallel[k] = ti.Node != c.node
			}
		}
	}
	c.mu.Unlock()
	for k, ti := range active {
		if _, ok := held[k]; ok {
			continue
		}
		if !h.GetFresh() && (ti.State == fsm.TaskAssigned || ti.State == fsm.TaskQueued) {
			resend = append(resend, ti)
			continue
		}
		lost = append(lost, fsm.TaskEvent{JobID: k.job, Task: k.task, Attempt: k.attempt, Kind: fsm.TaskLost})
	}
	var unknown []*longfairv1.AttemptRef
	for k, running := range held {
		if _, ok := active[k]; running && !ok {
			unknown = append(unknown, k.ref())
		}
	}
	if len(lost) > 0 {
		slices.SortFunc(lost, func(a, b fsm.TaskEvent) int {
			return compareKeys(attemptKey{a.JobID, a.Task, a.Attempt}, attemptKey{b.JobID, b.Task, b.Attempt})
		})
		t.log.Info("marking attempts lost: the worker does not hold them", "node", c.node, "attempts", len(lost), "fresh", h.GetFresh())
		if _, err := proposeFor[*fsm.EventsResult](t.ctx, t.s, &fsm.TaskEvents{Events: lost}); err != nil {
			return fmt.Errorf("mark the attempts the worker lost: %w", err)
		}
	}

	c.enqueue(t.welcome(c))
	if ackSeq > 0 {
		c.enqueue(ackMessage(ackSeq))
	}
	if len(unknown) > 0 {
		t.log.Info("killing attempts the ledger does not hold on this node", "node", c.node, "attempts", len(unknown))
		c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Kill{Kill: &longfairv1.Kill{
			Attempts: unknown, Report: false,
			Reason: "the ledger does not hold this attempt on this node (it was declared lost while the worker was unreachable)",
		}}})
	}
	c.mu.Lock()
	c.ready = true
	c.mu.Unlock()
	if len(resend) > 0 {
		t.log.Info("sending committed assignments the worker never received", "node", c.node, "attempts", len(resend))
		t.deliverTasks(c, resend)
	}
	// What was committed while the stream was being reconciled, and
	// attempts of jobs cancelled meanwhile.
	t.sweepConn(c, true)
	kick(t.members)
	kick(t.schedule)
	return nil
}

// activeOn returns the attempts the ledger holds active on a node.
func (t *leaderTerm) activeOn(node string) map[attemptKey]fsm.TaskInfo {
	run := t.s.fsm.Running(node)
	m := make(map[attemptKey]fsm.TaskInfo, len(run))
	for _, ti := range run {
		m[keyOfTask(ti)] = ti
	}
	return m
}

func ackMessage(seq uint64) *longfairv1.LeaderMessage {
	return &longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Ack{Ack: &longfairv1.Ack{AckedSeq: seq}}}
}

func compareKeys(a, b attemptKey) int {
	switch {
	case a.job != b.job:
		if a.job < b.job {
			return -1
		}
		return 1
	case a.task != b.task:
		if a.task < b.task {
			return -1
		}
		return 1
	case a.attempt != b.attempt:
		if a.attempt < b.attempt {
			return -1
		}
		return 1
	}
	return 0
}
