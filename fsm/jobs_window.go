package fsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// bucketJobsEnded indexes the ended jobs by when they ended: the end time
// (8) then the job's id (8), no value. A listing of the jobs active in a
// window — queued or running at some time from Since to Until, as sacct
// selects them — then reads the jobs that ended from Since until Until
// plus the longest any job lasted (a job ending later was submitted
// after Until), and the jobs not ended, instead of every job of the
// history: a month's jobs of a centre-year are a twelfth of them.
//
// It is a derived index (indexes.go), made from the jobs bucket alone.
var bucketJobsEnded = []byte("jobs_ended")

// jobEndedKeyLen is a job's key in the index.
const jobEndedKeyLen = 8 + 8

// indexEndedJob adds an ended job to the index and raises the longest
// span. A job ends once (maybeEndJob), keeping its end time, so a job
// saved again after it ended is indexed under the same key.
func indexEndedJob(idx *bolt.Bucket, j *jobRecord) error {
	if !j.State.Ended() || j.EndedAt <= 0 {
		return nil
	}
	k := binary.BigEndian.AppendUint64(make([]byte, 0, jobEndedKeyLen), uint64(j.EndedAt))
	if err := idx.Put(append(k, jobKey(j.ID)...), nil); err != nil {
		return fmt.Errorf("index ended job %d: %w", j.ID, err)
	}
	if err := raiseMaxSpan(idx, j.EndedAt.Sub(j.SubmittedAt)); err != nil {
		return fmt.Errorf("index ended job %d: %w", j.ID, err)
	}
	return nil
}

// activeIn reports whether job j was queued or running at some time in
// q's window: submitted at or before Until, and not ended before Since.
func (q *JobFilter) activeIn(j *jobRecord) bool {
	if q.Until > 0 && j.SubmittedAt > q.Until {
		return false
	}
	return !j.State.Ended() || j.EndedAt >= q.Since
}

// jobsInWindow returns, newest first, the ids below q.Before (all when it
// is 0) of the jobs that may have been active in q's window (q.Since > 0):
// those not ended, and those that ended from Since until Until plus the
// longest any job lasted. Their records decide (activeIn).
func jobsInWindow(tx *bolt.Tx, q *JobFilter) ([]uint64, error) {
	var ids []uint64
	keep := func(id uint64) {
		if q.Before == 0 || id < q.Before {
			ids = append(ids, id)
		}
	}
	c := tx.Bucket(bucketJobsActive).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		keep(readU64(k))
	}
	idx := tx.Bucket(bucketJobsEnded)
	if idx.Get(keyEndedBuilt) == nil {
		return nil, fmt.Errorf("the index of ended jobs is missing: restart the server to build it")
	}
	last := ledger.Time(math.MaxInt64)
	if span := ledger.Time(endedMaxSpan(idx)); q.Until > 0 && q.Until < math.MaxInt64-span {
		last = q.Until + span
	}
	end := u64(uint64(last))
	c = idx.Cursor()
	for k, _ := c.Seek(u64(uint64(q.Since))); k != nil && bytes.Compare(k[:min(len(k), 8)], end) <= 0; k, _ = c.Next() {
		if len(k) == jobEndedKeyLen {
			keep(readU64(k[8:]))
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}
