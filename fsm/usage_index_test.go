package fsm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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
	for name, damage := range indexDamages(bucketTasksEnded, endedKeyLen) {
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
			editStateFile(t, h.f, damage)
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
// of ended attempts: from every attempt of the history, in key order. Only
// where the attempts come from differs from Usage, which is what the
// comparison checks (and, through the order, that a row does not depend
// on it).
func usageByScan(f *FSM, q UsageQuery) ([]UsageRow, error) {
	periods, err := usagePeriods(q)
	if err != nil {
		return nil, err
	}
	var rows []UsageRow
	err = f.view(func(rs readSnap, tx *bolt.Tx) error {
		sum := newUsageSum(q, periods, rs)
		if err := tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
			var a attemptRecord
			if err := jsonUnmarshal(v, &a); err != nil {
				return err
			}
			sum.add(&a, k)
			return nil
		}); err != nil {
			return err
		}
		rows = sum.rows()
		return nil
	})
	return rows, err
}

// Of two attempts with the same peak memory, a row shows the request of
// the first in key order, whichever is added first.
func TestUsageTiesShowTheFirstAttemptsRequestInKeyOrder(t *testing.T) {
	first, second := taskKey(1, 0, 1), taskKey(2, 0, 1)
	a := AttemptUsage{Measured: true, PeakMemBytes: 4 << 30, MemRequested: 8 << 30}
	b := AttemptUsage{Measured: true, PeakMemBytes: 4 << 30, MemRequested: 16 << 30}
	for name, order := range map[string][2]int{"in key order": {0, 1}, "reversed": {1, 0}} {
		var g usageGroup
		keys, usages := [2][]byte{first, second}, [2]AttemptUsage{a, b}
		for _, i := range order {
			g.add(usages[i], keys[i])
		}
		if g.row.PeakMemBytes != a.PeakMemBytes || g.row.PeakMemRequested != a.MemRequested || g.row.Measured != 2 {
			t.Errorf("%s: peak %d of %d over %d measured; want %d of %d over 2", name, g.row.PeakMemBytes, g.row.PeakMemRequested, g.row.Measured, a.PeakMemBytes, a.MemRequested)
		}
	}
}
