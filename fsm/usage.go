package fsm

import (
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// UsageQuery selects a usage report: attempts that held resources during
// [From, To), grouped by account or by user, optionally of one account.
type UsageQuery struct {
	From, To ledger.Time
	ByUser   bool
	Account  string
	// Now is when running attempts are counted up to; it is raised to the
	// last applied command's time (so 0 means that time).
	Now ledger.Time
}

// UsageRow is one account's (or user's) usage over the range.
type UsageRow struct {
	// Key is the account or user name.
	Key string
	// Attempts is how many task attempts held resources in the range.
	Attempts int64
	// Usage is resource-seconds, each attempt clipped to the range.
	Usage map[string]float64
	// Runtime is the attempts' time in the range, summed.
	Runtime time.Duration
	// Charged is what the attempts that ended in the range were charged.
	Charged ledger.SU
}

// Usage sums resource usage and charges over a time range. An attempt
// holds its resources from when it started (or was placed, if no start was
// reported) until it ended, or until q.Now while it still runs.
func (f *FSM) Usage(q UsageQuery) ([]UsageRow, error) {
	if q.To <= q.From {
		return nil, invalid("usage range [%s, %s) is empty: give a from time before the to time", formatTime(q.From), formatTime(q.To))
	}
	var rows []UsageRow
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		n := len(rs.resources)
		now := max(q.Now, rs.now)
		type acc struct {
			row   UsageRow
			usage ledger.Vector
		}
		groups := make(map[string]*acc)
		err := tx.Bucket(bucketTasks).ForEach(func(_, v []byte) error {
			var a attemptRecord
			if err := jsonUnmarshal(v, &a); err != nil {
				return err
			}
			if q.Account != "" && a.Account != q.Account {
				return nil
			}
			start := a.AssignedAt
			if a.StartedAt != 0 {
				start = a.StartedAt
			}
			end := a.EndedAt
			if a.State.active() {
				end = now
			}
			lo, hi := max(start, q.From), min(end, q.To)
			charged := !a.State.active() && a.EndedAt >= q.From && a.EndedAt < q.To
			if hi <= lo && !charged {
				return nil
			}
			key := a.Account
			if q.ByUser {
				key = a.User
			}
			g := groups[key]
			if g == nil {
				g = &acc{row: UsageRow{Key: key}, usage: ledger.NewVector(n)}
				groups[key] = g
			}
			g.row.Attempts++
			if hi > lo {
				span := hi.Sub(lo)
				g.row.Runtime += span
				g.usage.AddScaled(pad(a.Demand, n), span.Seconds())
			}
			if charged {
				g.row.Charged += a.Charged
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, key := range sortedKeys(groups) {
			g := groups[key]
			g.row.Usage = named(rs.resources, g.usage)
			rows = append(rows, g.row)
		}
		return nil
	})
	return rows, err
}
