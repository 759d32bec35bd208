package fsm

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
)

// Requeueing a job (Slurm's scontrol requeue): its running tasks are
// stopped and run again from the start. RequeueJob only marks their
// attempts (Requeue); the leader's sweep has their workers stop them,
// and when each attempt's end is reported (or it is lost) endAttempt
// charges what it ran and puts the task back in the queue with a new
// attempt, whatever its exit code. The task is pending again only once
// its worker says it ended, so it never runs twice at once.
//
// Nothing is free: the job's hold covers each task's run once, so the
// stopped attempt is charged against a hold of its own, opened by
// RequeueJob for one task's worst case per attempt it marks
// (requeueHoldID) and refused, with nothing changed, when the account
// cannot cover it. The job's own hold stays whole for the reruns. Those
// holds are released with the job's.

// RequeueJob stops a job's running tasks and queues them again.
type RequeueJob struct {
	JobID uint64 `json:"job_id"`
}

func (*RequeueJob) Type() CommandType { return TypeRequeueJob }

func (c *RequeueJob) validate(rules) *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	return nil
}

// requeueHoldID is the hold of a job's n-th requeue (from 1).
func requeueHoldID(job uint64, n int) string { return fmt.Sprintf("job-%d.requeue-%d", job, n) }

// retryHoldID names the hold of a job's nth lost attempt that ran again.
func retryHoldID(job uint64, n int) string { return fmt.Sprintf("job-%d.retry-%d", job, n) }

// requeueJob applies RequeueJob; the result is a JobInfo.
func (b *batch) requeueJob(c *RequeueJob, t ledger.Time) (any, error) {
	st := b.st
	j, err := b.job(c.JobID)
	if err != nil {
		return nil, err
	}
	if j.State.Ended() {
		return nil, refuse(KindPrecondition, "job %d already %s at %s: there is nothing to requeue; submit it again", j.ID, j.State, formatTime(j.EndedAt))
	}
	if j.CancelledAt != 0 {
		return nil, refuse(KindPrecondition, "job %d was cancelled at %s: its tasks are stopping, not to run again", j.ID, formatTime(j.CancelledAt))
	}
	var marked []*attemptRecord
	for _, id := range sortedTaskIDs(st.running) {
		a := st.running[id]
		if a.Job != j.ID || a.Requeue {
			continue
		}
		if a.Attempt >= MaxAttemptsLimit {
			return nil, refuse(KindPrecondition, "task %d of job %d is on its attempt %d, the most a task may have: it cannot run again", a.Task, j.ID, a.Attempt)
		}
		marked = append(marked, a)
	}
	if len(marked) == 0 {
		return nil, refuse(KindPrecondition, "job %d has no running task that is not already being requeued: only running tasks are requeued ('longfair job show %d' shows its tasks)", j.ID, j.ID)
	}
	// Each is charged up to its own limit, which is its job's walltime
	// unless that was lowered after it was placed.
	var hold ledger.SU
	for _, a := range marked {
		h, err := ledger.WorstCaseHold(1, a.limit(j), j.allocation(), st.settings.BillingWeights, st.settings.BillingRule)
		if err != nil {
			return nil, invalid("%v", err)
		}
		if h > ledger.MaxSU-hold {
			return nil, invalid("requeueing %d tasks of job %d needs a hold of more than %v SU: requeue fewer", len(marked), j.ID, ledger.MaxSU)
		}
		hold += h
	}
	id := requeueHoldID(j.ID, j.Requeues+1)
	entries, err := st.su.Hold(id, j.Account, hold, t)
	if err != nil {
		r := ledgerRefusal(err)
		if r.Kind == KindInsufficientFunds {
			r.Msg = fmt.Sprintf("requeueing %d running task(s) of job %d needs a hold of %v SU for what they ran, as the job's hold is kept for their reruns: %s", len(marked), j.ID, hold, r.Msg)
		}
		return nil, r
	}
	if err := b.saveJournal(entries); err != nil {
		return nil, err
	}
	j.Requeues++
	for _, a := range marked {
		a.Requeue, a.ChargeHold = true, id
		if err := b.saveAttempt(a); err != nil {
			return nil, err
		}
	}
	b.markJob(j)
	b.touched[j.Account] = true
	return st.jobInfo(j), nil
}

// releaseRequeueHolds releases what is left of job j's requeue and retry
// holds, as it ends.
func (b *batch) releaseRequeueHolds(j *jobRecord, t ledger.Time) error {
	var ids []string
	for n := 1; n <= j.Requeues; n++ {
		ids = append(ids, requeueHoldID(j.ID, n))
	}
	for n := 1; n <= j.Retries; n++ {
		ids = append(ids, retryHoldID(j.ID, n))
	}
	for _, id := range ids {
		entries, err := b.st.su.Release(id, t)
		if err != nil {
			b.log.Error("fsm: SU book refused to release a requeue or retry hold", "job", j.ID, "hold", id, "err", err)
			continue
		}
		if err := b.saveJournal(entries); err != nil {
			return err
		}
	}
	return nil
}
