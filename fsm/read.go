package fsm

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// The read methods serve the gRPC API from this replica's state. Each sees
// the state between two applied batches, never half of one: in-memory reads
// hold the FSM's read lock, and reads that scan bbolt use a read
// transaction opened under it. Lists page with a cursor: pass the returned next value
// to continue, and the zero value to start; a zero next means the end.

// MaxPage bounds a page of any list; a limit ≤ 0 or larger gets this.
const MaxPage = 1000

func pageLimit(limit int) int {
	if limit <= 0 || limit > MaxPage {
		return MaxPage
	}
	return limit
}

// readSnap is what a read that scans bbolt needs from the in-memory state,
// captured at the same instant as its read transaction.
type readSnap struct {
	resources []string
	now       ledger.Time
	headSeq   uint64
	head      ledger.Hash
}

// view runs fn with a bbolt read transaction. The FSM's lock is held only
// to open it, so a long scan (a usage report, a journal verification) never
// holds up applies: the transaction keeps seeing the state as it was.
func (f *FSM) view(fn func(rs readSnap, tx *bolt.Tx) error) error {
	f.mu.RLock()
	if f.db == nil {
		f.mu.RUnlock()
		return errClosed
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		f.mu.RUnlock()
		return fmt.Errorf("fsm: read: %w", err)
	}
	rs := readSnap{resources: slices.Clone(f.st.settings.Resources), now: f.st.now}
	rs.headSeq, rs.head = f.st.su.Head()
	f.mu.RUnlock()
	defer tx.Rollback()
	return fn(rs, tx)
}

var errClosed = &Error{Kind: KindUnavailable, Msg: "the state store is closed: the server is shutting down or restoring; retry in a few seconds"}
