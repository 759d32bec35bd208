package fsm

import (
	bolt "go.etcd.io/bbolt"
)

// Attempt returns one attempt of one task, current or past (Tasks lists
// only each task's latest). Reading an earlier attempt's output needs the
// node it ran on.
func (f *FSM) Attempt(job uint64, task int64, attempt int) (TaskInfo, error) {
	var info TaskInfo
	err := f.view(func(_ readSnap, tx *bolt.Tx) error {
		var a attemptRecord
		ok, err := getJSON(tx.Bucket(bucketTasks), taskKey(job, task, attempt), &a)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("attempt %d of task %d of job %d does not exist: check the job, the task index and the attempt", attempt, task, job)
		}
		info = taskInfo(&a)
		return nil
	})
	return info, err
}
