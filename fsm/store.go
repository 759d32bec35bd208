package fsm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// schemaVersion is the layout of the bbolt file. Open refuses a file of
// another version rather than misread it.
const schemaVersion = 1

// The buckets of the bbolt file. Every bucket is flat (no nested buckets),
// so Digest is a plain walk in key order.
var (
	bucketMeta        = []byte("meta")
	bucketSettings    = []byte("settings")
	bucketAccounts    = []byte("accounts")
	bucketUsers       = []byte("users")
	bucketGrants      = []byte("grants")
	bucketJournal     = []byte("journal")
	bucketJobs        = []byte("jobs")
	bucketJobsAccount = []byte("jobs_by_account")
	bucketJobsUser    = []byte("jobs_by_user")
	bucketRequests    = []byte("requests")
	bucketTasks       = []byte("tasks")
	bucketNodes       = []byte("nodes")
	bucketFairness    = []byte("fairness")
	// bucketJobsActive and bucketTasksActive index the jobs that have not
	// ended and the attempts that hold resources, so that opening the FSM
	// reads only those, however long the history.
	bucketJobsActive  = []byte("jobs_active")
	bucketTasksActive = []byte("tasks_active")
)

var allBuckets = [][]byte{
	bucketMeta, bucketSettings, bucketAccounts, bucketUsers, bucketGrants, bucketJournal,
	bucketJobs, bucketJobsAccount, bucketJobsUser, bucketRequests, bucketTasks, bucketNodes,
	bucketFairness, bucketJobsActive, bucketTasksActive, bucketTokens,
	bucketGroups, bucketQueues, bucketShares, bucketHistory, bucketTasksEnded, bucketJobsEnded,
}

// isState reports whether bucket name holds state, which the digest
// counts: a bucket of allBuckets but the history (a report of the state,
// history.go) and the derived indexes (indexes.go). A bucket of a newer
// release, whose snapshot this one restored, is not: it is a derived index
// the newer release leaves out too, or state this release cannot know.
func isState(name []byte) bool {
	if string(name) == string(bucketHistory) || isDerived(name) {
		return false
	}
	return slices.ContainsFunc(allBuckets, func(b []byte) bool { return string(b) == string(name) })
}

// fillAppended tells bbolt, for this write transaction, how full to fill
// the pages it splits in the buckets whose keys mostly arrive in ascending
// order: the history, which grows with every job. bbolt's default, half,
// suits inserts anywhere; under appends it leaves every page half empty,
// which doubled the state file and so its snapshots and what a restore
// writes and checks (1.84 → 0.95 KB per task attempt in a centre's
// history, internal/history). The SU journal is never rewritten, so its
// pages fill whole; the others keep a tenth spare for records that grow in
// place (an attempt that starts, then ends) or arrive a little out of
// order (ends by time). The per-account and per-user job indexes are left
// at half: their keys arrive in one ascending run per account, inserted
// between the others', where fuller pages only split more often. The
// setting is not stored: it holds for tx only.
func fillAppended(tx *bolt.Tx) {
	for _, name := range [][]byte{bucketTasks, bucketTasksEnded, bucketJobs, bucketJobsEnded, bucketHistory} {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = 0.9
		}
	}
	if b := tx.Bucket(bucketJournal); b != nil {
		b.FillPercent = 1
	}
}

// Keys of the meta bucket.
var (
	keyApplied   = []byte("applied")    // index (8) + term (8)
	keyTime      = []byte("time")       // last command time (8)
	keySchema    = []byte("schema")     // schema version (8)
	keyNextJob   = []byte("next_job")   // last job id handed out (8)
	keyNextGrant = []byte("next_grant") // last generated grant number (8)
	keySettings  = []byte("cluster")    // in the settings bucket
	keyFairness  = []byte("book")       // in the fairness bucket; accounts are "a:<name>"
)

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func readU64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// jobKey is the job id, big-endian, so jobs sort by id.
func jobKey(id uint64) []byte { return u64(id) }

// taskKey is job id, task index, attempt: the attempts of one task are
// adjacent and in order.
func taskKey(job uint64, task int64, attempt int) []byte {
	b := make([]byte, 20)
	binary.BigEndian.PutUint64(b, job)
	binary.BigEndian.PutUint64(b[8:], uint64(task))
	binary.BigEndian.PutUint32(b[16:], uint32(attempt))
	return b
}

// taskPrefix is the key prefix of every attempt of one task (task ≥ 0) or of
// every task of a job (task < 0).
func taskPrefix(job uint64, task int64) []byte {
	if task < 0 {
		return u64(job)
	}
	return taskKey(job, task, 0)[:16]
}

// indexKey is name, a zero byte, then the job id: the jobs of one account or
// user, in id order. Names cannot contain a zero byte.
func indexKey(name string, id uint64) []byte {
	b := make([]byte, 0, len(name)+9)
	b = append(b, name...)
	b = append(b, 0)
	return append(b, u64(id)...)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode record %x: %w", key, err)
	}
	if err := b.Put(key, data); err != nil {
		return fmt.Errorf("store record %x: %w", key, err)
	}
	return nil
}

// getJSON decodes the value at key into v and reports whether there was one.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("decode record %x: %w", key, err)
	}
	return true, nil
}
