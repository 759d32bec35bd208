package fsm

import "github.com/longfair/longfair/ledger"

// Look-ahead queues (server config look_ahead, off by default). A slot
// freed by a task's end otherwise stays empty until the Assign of the
// pass the end triggers has committed and reached the worker. So the
// leader may also commit, per node, a queue of attempts the node's worker
// starts on its own the moment a slot frees (TaskPlacement.Queued), and
// reports each start as any other.
//
// A queued attempt holds nothing while it waits: it takes the node's free
// resources only when its start applies, and the fairness book counts it
// and its charge runs from then. It does claim room, though: ordinary
// placements see a node's free resources less what its queue holds
// (room), so a slot its end frees cannot go to anyone else before the
// queue has been served. A node's queue holds at most one node's worth
// (queueRoom: its capacity less what is queued), one-node tasks only. The
// scheduler's view counts a queued task in its account's running vector
// only once it starts, as the fairness book does: counting it while it
// waits weighs against accounts of short tasks, more of whose tasks wait
// in the queues at any time (an account of 0.1 s tasks ended with 0.64
// of the usage of one of 0.3 s tasks in e2e's
// TestLiveFairnessHMRFConverges).
//
// What look-ahead costs fairness: a task is queued in the policy's order
// at the pass that queues it (sched.LookAheadView says how that pass
// ranks), and then keeps its place. A task that becomes more deserving
// later (a new submission, an account whose share fell) can therefore
// wait behind at most one node's worth of queued tasks on each node, that
// is at most one queued task per slot, and each of those runs at most its
// walltime. The policy's order among what is not yet queued is untouched.
// Over time the shares stay close, not exact: in the test above the two
// accounts end at a usage ratio of 0.94 to 1.01 with look-ahead, 0.997
// without.
//
// Charges stay exact: a queued attempt is charged the runtime its worker
// measures from its start. One lost with its node before it was reported
// started is charged nothing; its worker may have started it in the last
// moments, in a slot whose previous attempt is charged up to the loss.

// waiting is how many of j's tasks wait in look-ahead queues to start:
// the reads count them as pending, not running. Once j is cancelled none
// will start (their workers are dropping them), and they count as
// running, being stopped, until their ends are in.
func (j *jobRecord) waiting() int64 {
	if j.CancelledAt != 0 {
		return 0
	}
	return j.Queued
}

// takeBackQueued marks j's attempts that wait in look-ahead queues to be
// stopped and queued again (Requeue, as RequeueJob marks running ones):
// a held job starts nothing, and one whose walltime was lowered starts
// nothing with the old one. One its worker started meanwhile is charged
// what it ran, and its rerun is paid for (tasks.go rerunHold).
func (b *batch) takeBackQueued(j *jobRecord) error { return b.changeAttempts(j, takeBack) }

// takeBack marks a to be taken back if it waits in a look-ahead queue,
// and reports whether it did.
func takeBack(a *attemptRecord) bool {
	if a.State != TaskQueued || a.Requeue {
		return false
	}
	a.Requeue = true
	return true
}

// startQueued moves queued attempt a, whose start is being applied at t,
// from its node's queue onto the node's resources, and starts counting it
// in the fairness book. Its worker started it in a slot an end freed, and
// reports the end before the start, so the room is there; were it not
// (an end lost on the way), the node's free resources go below zero until
// the ends are in, and nothing is placed there meanwhile.
func (b *batch) startQueued(j *jobRecord, a *attemptRecord, t ledger.Time) {
	st := b.st
	for _, node := range a.allNodes() {
		if nd, ok := st.nodes[node]; ok {
			st.release(nd, a)
		}
	}
	a.State, a.CountedFrom = TaskRunning, t
	for _, node := range a.allNodes() {
		if nd, ok := st.nodes[node]; ok {
			st.hold(nd, a)
		}
	}
	st.fair.TaskStarted(j.Account, a.Demand, t)
	j.Queued--
	if j.State == JobPending {
		j.State = JobRunning
	}
	b.touched[j.Account] = true
	b.markJob(j)
}
