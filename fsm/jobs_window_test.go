package fsm

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// allJobs lists every job newest first, a page at a time, without a
// window: the listing the window's is checked against.
func allJobs(t *testing.T, f *FSM) []JobInfo {
	t.Helper()
	var out []JobInfo
	for before := uint64(0); ; {
		page, next, err := f.Jobs(JobFilter{Before: before, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if next == 0 {
			return out
		}
		before = next
	}
}

// windowPages lists q's jobs at page size limit, following the pages.
func windowPages(t *testing.T, f *FSM, q JobFilter, limit int) []JobInfo {
	t.Helper()
	var out []JobInfo
	for pages := 0; ; pages++ {
		q.Limit = limit
		page, next, err := f.Jobs(q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		if len(page) > limit {
			t.Fatalf("%+v: a page of %d jobs, asked for %d", q, len(page), limit)
		}
		out = append(out, page...)
		if next == 0 {
			return out
		}
		if pages > 10_000 {
			t.Fatalf("%+v: the pages do not end", q)
		}
		q.Before = next
	}
}

// TestJobsInAWindowAreTheJobsActiveInIt: on random histories (the
// workload's arrays, passes, exits, lost tasks, cancellations, clocks that
// step back), the jobs listed for a window [Since, Until] — read through
// the index of ended jobs — are exactly those of the whole listing that
// were submitted by Until and had not ended before Since, newest first,
// whatever the page size, alone or with an account, a user or states.
func TestJobsInAWindowAreTheJobsActiveInIt(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			h := newWorkload(t, seed).run(600)
			every := allJobs(t, h.f)
			r := rand.New(rand.NewPCG(seed, 5))
			span := h.now.Sub(t0)
			at := func() ledger.Time {
				return t0.Add(time.Duration(r.Int64N(int64(span+2*time.Hour))) - time.Hour)
			}
			var sawEndedAfter, sawRunning, sawOut bool
			for range 60 {
				a, b := at(), at()
				q := JobFilter{Since: min(a, b), Until: max(a, b)}
				if r.IntN(4) == 0 {
					q.Until = 0 // until now
				}
				switch r.IntN(5) {
				case 0:
					q.Account = fmt.Sprintf("acct%d", r.IntN(5))
				case 1:
					q.User = fmt.Sprintf("user%d", r.IntN(7))
				case 2:
					q.States = []JobState{JobSucceeded, JobFailed, JobCancelled, JobPending, JobRunning}[r.IntN(5):][:1]
				}
				var want []JobInfo
				for _, j := range every {
					switch {
					case q.Account != "" && j.Account != q.Account, q.User != "" && j.User != q.User,
						len(q.States) > 0 && !slices.Contains(q.States, j.State):
						continue
					case q.Until > 0 && j.SubmittedAt > q.Until, j.State.Ended() && j.EndedAt < q.Since:
						sawOut = true
						continue
					}
					sawEndedAfter = sawEndedAfter || j.State.Ended() && q.Until > 0 && j.EndedAt > q.Until
					sawRunning = sawRunning || !j.State.Ended()
					want = append(want, j)
				}
				for _, limit := range []int{1, 3, 1000} {
					if got := windowPages(t, h.f, q, limit); !reflect.DeepEqual(got, want) {
						t.Fatalf("%+v at %d a page: %d jobs %v, want %d %v", q, limit, len(got), jobIDs(got), len(want), jobIDs(want))
					}
				}
			}
			if !sawEndedAfter || !sawRunning || !sawOut {
				t.Fatalf("no window held a job that ended after it (%v), one not ended (%v), or left a job out (%v): the comparison proves little", sawEndedAfter, sawRunning, sawOut)
			}
		})
	}
}

func jobIDs(js []JobInfo) []uint64 {
	ids := make([]uint64, len(js))
	for i, j := range js {
		ids[i] = j.ID
	}
	return ids
}

// A window that ends before it starts is refused, not answered empty.
func TestJobsWindowBackwardsIsRefused(t *testing.T) {
	h := newWorkload(t, 1).run(50)
	_, _, err := h.f.Jobs(JobFilter{Since: t0.Add(time.Hour), Until: t0})
	if KindOf(err) != KindInvalid {
		t.Fatalf("a backwards window: %v, want an invalid-argument refusal", err)
	}
}

// A state file without the index of ended jobs (written before it
// existed) or with one an older release left behind gets it built when
// opened: the window's listing and the digest are the same.
func TestJobsIndexIsBuiltWhenMissingOrBehind(t *testing.T) {
	for name, damage := range indexDamages(bucketJobsEnded, jobEndedKeyLen) {
		t.Run(name, func(t *testing.T) {
			h := newWorkload(t, 2).run(400)
			q := JobFilter{Since: t0.Add(time.Hour), Until: h.now}
			want := windowPages(t, h.f, q, 1000)
			if len(want) == 0 {
				t.Fatal("the window holds no job: the comparison proves nothing")
			}
			digest := digestOf(t, h.f)
			editStateFile(t, h.f, damage)
			f := openFSM(t, h.dir)
			if got := windowPages(t, f, q, 1000); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the index was rebuilt: %v, want %v", jobIDs(got), jobIDs(want))
			}
			if d := digestOf(t, f); d != digest {
				t.Fatalf("digest after the index was rebuilt %x, was %x", d, digest)
			}
		})
	}
}
