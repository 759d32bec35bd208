package fsm

import (
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// The fairness report's per-account job sums come from a cache that
// applied commands invalidate: after every command of a busy history the
// report must equal a fresh walk of every account's jobs.
func TestFairnessJobTotalsFollowEveryCommand(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&CreateAccount{Name: "bio"})
	h.ok(&AddMembership{User: "ann", Account: "bio"})
	h.ok(&Grant{ID: "g2", Account: "bio", Amount: 1000 * ledger.MicroPerSU})
	check := func(step string) {
		t.Helper()
		r, err := h.f.Fairness("", h.now)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.Accounts {
			fresh := h.f.st.sumJobs(row.Account)
			if row.Running != fresh.running || row.Pending != fresh.pending || row.Allocation["cpu"] != fresh.alloc[0] {
				t.Fatalf("after %s, %s's report says running %d pending %d cpu %v; its jobs say %d, %d, %v",
					step, row.Account, row.Running, row.Pending, row.Allocation["cpu"], fresh.running, fresh.pending, fresh.alloc[0])
			}
		}
	}
	job := func(acct string, tasks int64) *SubmitJob {
		return &SubmitJob{Account: acct, User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: tasks, Walltime: time.Hour, Command: []string{"x"}}
	}
	h.ok(job("phys", 3))
	check("a submission")
	h.ok(job("bio", 2))
	check("a second account's submission")
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 2, Task: 0, Node: "n1"}}})
	check("placements")
	h.at(time.Minute)
	h.ok(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: TaskStarted}, exited(2, 0, 1, 0, time.Minute)}})
	check("an end")
	h.ok(&HoldJob{JobID: 2, Hold: true})
	check("a hold")
	h.ok(&RequeueJob{JobID: 1})
	h.ok(&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 143, time.Minute)}})
	check("a requeue")
	h.ok(&NodeDown{ID: "n1"})
	check("a node lost")
	h.ok(&CancelJob{JobID: 1})
	check("a cancel")
	h.ok(&UpdateSettings{Policy: strp("drf")})
	check("new settings")
}
