package cli

import (
	"strings"
	"testing"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// explain prints what the engine explained (sched.Engine.Explain, served
// by Jobs.ExplainJob; the engine's tests check the explanation itself): a
// job no up node can hold is told what is too large, the largest up
// shapes, and that it does not hold back the account's later jobs; an
// account behind another it may not see says so without naming it.
func TestExplainPrintsTheEngineExplanation(t *testing.T) {
	job := &longfairv1.Job{Id: 7, Account: "bio", Demand: map[string]float64{"cpu": 5}, Tasks: 1, PendingTasks: 1}
	x := &longfairv1.JobExplanation{Job: job, Policy: "drf", Wait: longfairv1.JobWait_JOB_WAIT_NO_NODE_HOLDS,
		Lacking: "cpu=5", LargestNodes: "cpu=4 mem=8G mic=2", LargestShapes: 1,
		Rank: 2, RankedAccounts: 3, RankRule: "the smallest share goes first", Weight: 1, TotalWeight: 3}
	e := &explanation{Job: job, Account: "bio"}
	explainNodes(e, x)
	explainRank(e, x)
	if len(e.Reasons) != 2 {
		t.Fatalf("reasons: %+v", e.Reasons)
	}
	for i, want := range [][]string{
		{"resources", "no up node can hold cpu=5:", "the largest up node has cpu=4 mem=8G mic=2", "does not hold back bio's later jobs"},
		{"rank", "bio ranks 2 of 3 accounts with pending tasks under drf", "weight 1 of 3", "another account goes first now: the smallest share goes first"},
	} {
		r := e.Reasons[i]
		if r.Kind != want[0] {
			t.Errorf("reason %d is %s, want %s", i, r.Kind, want[0])
		}
		for _, w := range want[1:] {
			if !strings.Contains(r.Text, w) {
				t.Errorf("reason %s: %q, want it to say %q", r.Kind, r.Text, w)
			}
		}
	}
}
