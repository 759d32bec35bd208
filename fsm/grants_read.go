package fsm

import (
	"fmt"
	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// GrantInfo is a grant of SUs.
type GrantInfo struct {
	ID        string
	Account   string
	Amount    ledger.SU
	Expires   ledger.Time // 0: never
	GrantedAt ledger.Time
	Note      string
}

func grantInfo(g *grantRecord) GrantInfo {
	return GrantInfo{ID: g.ID, Account: g.Account, Amount: g.Amount, Expires: g.Expires, GrantedAt: g.GrantedAt, Note: g.Note}
}

// Grants lists grants in id order after the id after; account, if not
// empty, keeps only that account's.
func (f *FSM) Grants(account, after string, limit int) (grants []GrantInfo, next string, err error) {
	limit = pageLimit(limit)
	err = f.view(func(_ readSnap, tx *bolt.Tx) error {
		c := tx.Bucket(bucketGrants).Cursor()
		k, v := c.First()
		if after != "" {
			k, v = c.Seek([]byte(after))
			if k != nil && string(k) == after {
				k, v = c.Next()
			}
		}
		for ; k != nil; k, v = c.Next() {
			var g grantRecord
			if err := jsonUnmarshal(v, &g); err != nil {
				return err
			}
			if account != "" && g.Account != account {
				continue
			}
			if len(grants) == limit {
				next = grants[len(grants)-1].ID
				break
			}
			grants = append(grants, grantInfo(&g))
		}
		return nil
	})
	return grants, next, err
}

// Balance returns an account's SU balance with grant expiry evaluated at at.
func (f *FSM) Balance(account string, at ledger.Time) (ledger.Balance, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if _, ok := f.st.accounts[account]; !ok {
		return ledger.Balance{}, notFound("account %q does not exist: check the name", account)
	}
	return f.st.su.Balance(account, max(at, f.st.now)), nil
}

// Journal returns up to limit journal entries with Seq > after; account, if
// not empty, keeps only entries of that account. next is the Seq to pass as
// after for the following page, 0 at the end. It reads the journal from
// the state file: the SU book does not hold it (install).
func (f *FSM) Journal(account string, after uint64, limit int) (entries []ledger.JournalEntry, next uint64, err error) {
	limit = pageLimit(limit)
	err = f.view(func(_ readSnap, tx *bolt.Tx) error {
		c := tx.Bucket(bucketJournal).Cursor()
		for k, v := c.Seek(u64(after + 1)); k != nil; k, v = c.Next() {
			var e ledger.JournalEntry
			if err := e.UnmarshalBinary(v); err != nil {
				return fmt.Errorf("fsm: read SU journal entry %d: %w", readU64(k), err)
			}
			if account != "" && e.Account != account {
				continue
			}
			if len(entries) == limit {
				next = entries[len(entries)-1].Seq
				return nil
			}
			entries = append(entries, e)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return entries, next, nil
}

// Verify checks the journal as stored in bbolt: its hash chain, and every
// balance recomputed from it. It also checks that the stored journal ends
// where the live SU book does, which catches entries cut off the end.
func (f *FSM) Verify() (ledger.VerifyReport, error) {
	var report ledger.VerifyReport
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		journal := tx.Bucket(bucketJournal)
		var err error
		report, err = ledger.VerifyFrom(storedEntries(journal), journalReader(journal))
		if err != nil {
			return err
		}
		if rs.headSeq != report.LastSeq || rs.head != report.Head {
			return &ledger.VerifyError{Seq: report.LastSeq + 1, Position: report.Entries,
				Problem: "the stored journal ends before the live SU book's last entry: entries were removed from its end"}
		}
		return nil
	})
	return report, err
}
