package fsm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// TestUsageByIndexMatchesAFullScan: on random histories (workload: arrays,
// starts, exits with and without measurements, lost tasks, nodes down,
// cancellations, clocks that step back), every usage report read through
// the index of ended attempts equals the one a scan of every attempt gives
// (usageByScan, the report as it was computed before the index), for
// random ranges, period cuts, groupings and accounts — ranges that cut
// through running and long attempts included.
func TestUsageByIndexMatchesAFullScan(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			h := w.run(500)
			r := rand.New(rand.NewPCG(seed, 99))
			span := h.now.Sub(t0)
			ended := 0
			for _, q := range randomUsageQueries(r, span, 40) {
				q.Now = h.now
				want, wantErr := usageByScan(h.f, q)
				got, err := h.f.Usage(q)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("query %+v: error %v, a full scan says %v", q, err, wantErr)
				}
				compareUsageRows(t, q, got, want)
				for _, row := range want {
					ended += int(row.Ended)
				}
			}
			if ended == 0 {
				t.Fatal("no query saw an ended attempt: the comparison proves nothing")
			}
		})
	}
}

// A state file written before the index existed (or a snapshot taken
// then) gets the index built when it is opened, and so does one whose
// index an older release left behind (a downgrade: it applied entries,
// ending attempts, without indexing them): the reports are the same and
// so is the digest.
func TestUsageIndexIsBuiltWhenMissingOrBehind(t *testing.T) {
	for name, damage := range map[string]func(tx *bolt.Tx) error{
		"no index": func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketTasksEnded) },
		"index behind": func(tx *bolt.Tx) error {
			idx := tx.Bucket(bucketTasksEnded)
			c := idx.Cursor()
			k, _ := c.Last()
			if len(k) != endedKeyLen {
				return fmt.Errorf("no ended attempt to unindex")
			}
			if err := c.Delete(); err != nil {
				return err
			}
			return idx.SetSequence(idx.Sequence() - 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newWorkload(t, 3).run(400)
			q := UsageQuery{From: t0, To: h.now.Add(time.Hour), Now: h.now, ByUser: true}
			want, err := h.f.Usage(q)
			if err != nil || len(want) == 0 {
				t.Fatalf("report before: %d rows, %v", len(want), err)
			}
			digest, err := h.f.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if err := h.f.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(h.f.path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(damage); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			f := openFSM(t, h.dir)
			got, err := f.Usage(q)
			if err != nil {
				t.Fatal(err)
			}
			compareUsageRows(t, q, got, want)
			if d, err := f.Digest(); err != nil || d != digest {
				t.Fatalf("digest after the index was rebuilt %x (%v), was %x", d, err, digest)
			}
		})
	}
}

// randomUsageQueries are n queries over [t0 - 1h, t0 + span + 1h): short
// and long ranges, some cut into periods, by account or user, of all or of
// one account (one that may not exist).
func randomUsageQueries(r *rand.Rand, span time.Duration, n int) []UsageQuery {
	at := func() ledger.Time {
		return t0.Add(time.Duration(r.Int64N(int64(span+2*time.Hour))) - time.Hour)
	}
	var qs []UsageQuery
	for range n {
		a, b := at(), at()
		if r.IntN(3) == 0 {
			b = a.Add(time.Duration(1+r.IntN(3600)) * time.Second)
		}
		if a == b {
			continue
		}
		q := UsageQuery{From: min(a, b), To: max(a, b), ByUser: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			q.Account = fmt.Sprintf("acct%d", r.IntN(5))
		}
		for range r.IntN(4) {
			c := q.From.Add(time.Duration(r.Int64N(int64(q.To.Sub(q.From)))))
			if c > q.From && !slices.Contains(q.Split, c) {
				q.Split = append(q.Split, c)
			}
		}
		slices.Sort(q.Split)
		qs = append(qs, q)
	}
	return qs
}

// compareUsageRows checks got against want: counts, charges and peaks
// exactly; sums of floats to a relative 1e-9, as the two add the same
// terms in another order.
func compareUsageRows(t *testing.T, q UsageQuery, got, want []UsageRow) {
	t.Helper()
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(x), math.Abs(y)) }
	if len(got) != len(want) {
		t.Fatalf("query %+v: %d rows, a full scan gives %d:\n got %+v\nwant %+v", q, len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		gu, wu := g.Usage, w.Usage
		g.Usage, w.Usage = nil, nil
		gc, wc := g.CPUAllocated+g.CPUUsed, w.CPUAllocated+w.CPUUsed
		g.CPUAllocated, g.CPUUsed, w.CPUAllocated, w.CPUUsed = 0, 0, 0, 0
		if !reflect.DeepEqual(g, w) || !near(gc, wc) || len(gu) != len(wu) {
			t.Fatalf("query %+v: row %d\n got %+v\nwant %+v", q, i, got[i], want[i])
		}
		for k, v := range wu {
			if !near(gu[k], v) {
				t.Fatalf("query %+v: row %d usage of %s %v, a full scan gives %v", q, i, k, gu[k], v)
			}
		}
	}
}

// usageByScan is the usage report as Usage computed it before the index
// of ended attempts: by decoding every attempt of the history. Ties of
// peak memory keep the first attempt in key order, as Usage does.
func usageByScan(f *FSM, q UsageQuery) ([]UsageRow, error) {
	if q.To <= q.From {
		return nil, invalid("usage range [%s, %s) is empty: give a from time before the to time", formatTime(q.From), formatTime(q.To))
	}
	// periods[i] starts period i; period i ends where i+1 starts, the last
	// at To.
	periods := append([]ledger.Time{q.From}, q.Split...)
	for i := 1; i < len(periods); i++ {
		if periods[i] <= periods[i-1] || periods[i] >= q.To {
			return nil, invalid("usage period cut %s is not after %s and before %s: give increasing times inside the range", formatTime(periods[i]), formatTime(periods[i-1]), formatTime(q.To))
		}
	}
	periodEnd := func(i int) ledger.Time {
		if i+1 < len(periods) {
			return periods[i+1]
		}
		return q.To
	}
	// periodOf is the period holding t (From ≤ t < To).
	periodOf := func(t ledger.Time) int {
		i, found := slices.BinarySearch(periods, t)
		if !found {
			i--
		}
		return i
	}
	var rows []UsageRow
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		n := len(rs.resources)
		now := max(q.Now, rs.now)
		type acc struct {
			row   UsageRow
			usage ledger.Vector
		}
		type groupKey struct {
			period int
			key    string
		}
		groups := make(map[groupKey]*acc)
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
			group := func(p int) *acc {
				k := groupKey{p, key}
				g := groups[k]
				if g == nil {
					g = &acc{row: UsageRow{Period: periods[p], Key: key}, usage: ledger.NewVector(n)}
					groups[k] = g
				}
				return g
			}
			// The attempt counts in every period it held resources in,
			// and its charge in the one it ended in.
			if hi > lo {
				for p := periodOf(lo); p < len(periods) && periods[p] < hi; p++ {
					g := group(p)
					g.row.Attempts++
					span := min(hi, periodEnd(p)).Sub(max(lo, periods[p]))
					g.row.Runtime += span
					g.usage.AddScaled(pad(a.Demand, n), span.Seconds())
				}
			}
			if charged {
				g := group(periodOf(a.EndedAt))
				if hi <= lo || periodOf(a.EndedAt) != periodOf(max(hi-1, lo)) {
					g.row.Attempts++ // ended here without running here
				}
				g.row.Charged += a.Charged
				g.row.Ended++
				g.row.add(usageOf(&a, rs.resources))
			}
			return nil
		})
		if err != nil {
			return err
		}
		keys := make([]groupKey, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y groupKey) int {
			if x.period != y.period {
				return x.period - y.period
			}
			return strings.Compare(x.key, y.key)
		})
		for _, k := range keys {
			g := groups[k]
			g.row.Usage = named(rs.resources, g.usage)
			rows = append(rows, g.row)
		}
		return nil
	})
	return rows, err
}
