package fsm

import (
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
// after for the following page, 0 at the end.
func (f *FSM) Journal(account string, after uint64, limit int) (entries []ledger.JournalEntry, next uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	limit = pageLimit(limit)
	for from := after + 1; ; {
		page := f.st.su.JournalFrom(from, MaxPage)
		if len(page) == 0 {
			return entries, 0
		}
		for _, e := range page {
			if account != "" && e.Account != account {
				continue
			}
			if len(entries) == limit {
				return entries, entries[len(entries)-1].Seq
			}
			entries = append(entries, e)
		}
		from = page[len(page)-1].Seq + 1
	}
}

// Verify checks the journal as stored in bbolt: its hash chain, and every
// balance recomputed from it. It also checks that the stored journal ends
// where the live SU book does, which catches entries cut off the end.
func (f *FSM) Verify() (ledger.VerifyReport, error) {
	var report ledger.VerifyReport
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		entries, err := storedJournal(tx)
		if err != nil {
			return err
		}
		report, err = ledger.Verify(entries)
		if err != nil {
			return err
		}
		if rs.headSeq != report.LastSeq || rs.head != report.Head {
			return &ledger.VerifyError{Seq: report.LastSeq + 1, Position: len(entries),
				Problem: "the stored journal ends before the live SU book's last entry: entries were removed from its end"}
		}
		return nil
	})
	return report, err
}
