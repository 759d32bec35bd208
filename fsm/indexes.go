package fsm

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A derived index is a bucket built from another bucket's records and
// nothing else: every replica writes the same entries as it applies the
// same commands, and a state file without it (written before it existed,
// or restored from a snapshot taken then) gets it built when it is
// opened. It is not state of its own, so Digest leaves it out: the
// records it is made from are digested, and old fixtures' digests hold.
type derivedIndex struct {
	bucket []byte
	what   string // for errors: "ended attempts"
	// source is the bucket it is built from, and add indexes one of its
	// records.
	source []byte
	add    func(idx *bolt.Bucket, v []byte) error
}

// Keys of every derived index other than its entries (which begin with a
// time after 1972, so never 0x00).
var (
	// keyEndedBuilt is present once the index was built (see
	// buildIndexes for how it stays complete).
	keyEndedBuilt = []byte("\x00built")
	// keyEndedMaxSpan is the longest time an ended attempt held resources,
	// or an ended job lasted from its submission, in nanoseconds (8).
	keyEndedMaxSpan = []byte("\x00max_span")
)

// derivedIndexes are the FSM's derived indexes: the ended attempts by
// end time (usage_index.go) and the ended jobs by end time
// (jobs_window.go).
func derivedIndexes() []derivedIndex {
	return []derivedIndex{
		{bucketTasksEnded, "ended attempts", bucketTasks, func(idx *bolt.Bucket, v []byte) error {
			var a attemptRecord
			if err := jsonUnmarshal(v, &a); err != nil {
				return err
			}
			return indexEnded(idx, &a)
		}},
		{bucketJobsEnded, "ended jobs", bucketJobs, func(idx *bolt.Bucket, v []byte) error {
			var j jobRecord
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			return indexEndedJob(idx, &j)
		}},
	}
}

// isDerived reports whether bucket name is a derived index.
func isDerived(name []byte) bool {
	for _, ix := range derivedIndexes() {
		if string(ix.bucket) == string(name) {
			return true
		}
	}
	return false
}

// markIndexes records that every derived index is complete up to raft
// index applied, in the bucket's sequence: each batch does as it finishes
// (batch.finish), so entries an older release applied (after a
// downgrade) leave the mark behind, and the index is rebuilt.
func markIndexes(tx *bolt.Tx, applied uint64) error {
	for _, ix := range derivedIndexes() {
		if err := tx.Bucket(ix.bucket).SetSequence(applied); err != nil {
			return fmt.Errorf("store the index of %s's mark: %w", ix.what, err)
		}
	}
	return nil
}

// buildIndexes (re)builds each derived index that is not complete up to
// the state file's applied index. A rebuild decodes every record of its
// source once: minutes for the attempts of a centre-year.
func buildIndexes(tx *bolt.Tx, applied uint64) error {
	for _, ix := range derivedIndexes() {
		idx := tx.Bucket(ix.bucket)
		if idx.Get(keyEndedBuilt) != nil && idx.Sequence() == applied {
			continue
		}
		if err := tx.DeleteBucket(ix.bucket); err != nil {
			return fmt.Errorf("build the index of %s: %w", ix.what, err)
		}
		idx, err := tx.CreateBucket(ix.bucket)
		if err != nil {
			return fmt.Errorf("build the index of %s: %w", ix.what, err)
		}
		err = tx.Bucket(ix.source).ForEach(func(k, v []byte) error {
			if err := ix.add(idx, v); err != nil {
				return fmt.Errorf("record %x: %w", k, err)
			}
			return nil
		})
		if err == nil {
			err = idx.Put(keyEndedBuilt, nil)
		}
		if err == nil {
			err = idx.SetSequence(applied)
		}
		if err != nil {
			return fmt.Errorf("build the index of %s: %w", ix.what, err)
		}
	}
	return nil
}

// raiseMaxSpan raises an index's longest span (keyEndedMaxSpan) to span.
func raiseMaxSpan(idx *bolt.Bucket, span time.Duration) error {
	if span <= endedMaxSpan(idx) {
		return nil
	}
	return idx.Put(keyEndedMaxSpan, u64(uint64(span)))
}

func endedMaxSpan(idx *bolt.Bucket) time.Duration {
	if v := idx.Get(keyEndedMaxSpan); len(v) == 8 {
		return time.Duration(readU64(v))
	}
	return 0
}
