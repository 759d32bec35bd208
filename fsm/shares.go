package fsm

import (
	"math"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// FAWKES partitions (sched/fawkes): under the fawkes policy every account
// runs within a share of the cluster that the leader's FAWKES weighting
// recomputes every interval and commits with SetShares, so that every
// server's view carries the same Account.Share.

// AccountShare is one account's FAWKES partition: a fraction of the cluster.
type AccountShare struct {
	Account string  `json:"account"`
	Share   float64 `json:"share"`
}

// SetShares replaces every account's FAWKES partition: the accounts listed
// get their share, the others none. Accounts are listed once each, in name
// order, and the shares add up to at most 1.
type SetShares struct {
	Shares []AccountShare `json:"shares"`
}

func (*SetShares) Type() CommandType { return TypeSetShares }

// sharesSlack is how far above 1 the shares may add up, for rounding.
const sharesSlack = 1e-9

func (c *SetShares) validate(r rules) *Error {
	if len(c.Shares) > MaxBatch {
		return invalid("set-shares lists %d accounts: at most %d", len(c.Shares), MaxBatch)
	}
	total := 0.0
	for i, s := range c.Shares {
		if err := checkName("account name", s.Account); err != nil {
			return err
		}
		if i > 0 && s.Account <= c.Shares[i-1].Account {
			return invalid("set-shares lists %q after %q: list each account once, in name order", s.Account, c.Shares[i-1].Account)
		}
		if math.IsNaN(s.Share) || s.Share < 0 || s.Share > 1 {
			return invalid("share %v of account %q is out of range: a share is a fraction of the cluster in [0, 1]", s.Share, s.Account)
		}
		total += s.Share
	}
	if total > 1+sharesSlack {
		return invalid("the shares add up to %v: partitions of one cluster add up to at most 1", total)
	}
	return nil
}

// sharesRecord is the FAWKES partitions as stored: the accounts with a
// share above zero, in name order, and when they were set.
type sharesRecord struct {
	At     ledger.Time    `json:"at"`
	Shares []AccountShare `json:"shares"`
}

// bucketShares holds the FAWKES partitions, one record under keyShares.
var bucketShares = []byte("fawkes_shares")

// keyShares is the one record of bucketShares.
var keyShares = []byte("fawkes")

// SharesInfo is the FAWKES partitions: each account's fraction of the
// cluster (accounts without one are left out) and when they were set (0:
// never).
type SharesInfo struct {
	At     ledger.Time
	Shares map[string]float64
}

// setShares applies SetShares; the result is a SharesInfo.
func (b *batch) setShares(c *SetShares, t ledger.Time) (any, error) {
	st := b.st
	rec := &sharesRecord{At: t, Shares: []AccountShare{}}
	for _, s := range c.Shares {
		if _, ok := st.accounts[s.Account]; !ok {
			return nil, notFound("account %q does not exist: shares go to existing accounts only", s.Account)
		}
		if s.Share > 0 {
			rec.Shares = append(rec.Shares, s)
		}
	}
	if err := putJSON(b.bucket(bucketShares), keyShares, rec); err != nil {
		return nil, err
	}
	st.shares.set(rec)
	return st.shares.info(), nil
}

// shareState is the FAWKES partitions in memory.
type shareState struct {
	at     ledger.Time
	shares map[string]float64
}

func (s *shareState) set(rec *sharesRecord) {
	s.at = rec.At
	s.shares = make(map[string]float64, len(rec.Shares))
	for _, x := range rec.Shares {
		s.shares[x.Account] = x.Share
	}
}

func (s *shareState) info() SharesInfo {
	out := SharesInfo{At: s.at, Shares: make(map[string]float64, len(s.shares))}
	for k, v := range s.shares {
		out.Shares[k] = v
	}
	return out
}

// load reads the partitions.
func (s *shareState) load(tx *bolt.Tx) error {
	rec := &sharesRecord{}
	if b := tx.Bucket(bucketShares); b != nil {
		if _, err := getJSON(b, keyShares, rec); err != nil {
			return err
		}
	}
	s.set(rec)
	return nil
}

// Shares returns the FAWKES partitions.
func (f *FSM) Shares() SharesInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.shares.info()
}
