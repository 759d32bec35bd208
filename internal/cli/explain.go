package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const explainHelp = `Usage: longfair explain JOB_ID [flags]

Says why a pending job has not started: where its account ranks under the
cluster's policy and why (its β, its share), and what the job waits for —
a worker node at all, a node big enough (or with a MIC), free resources,
earlier jobs of the same account, its service units, the starvation
time-out.

The policy engine explains its own decision: the rank is the one a
scheduling pass would begin with now, over the cluster state of the server
asked (usage projected to the end of the scheduling quantum), among the
accounts with a pending task some up node can hold.

Example:
  longfair explain 12
  longfair explain 12 --output json
`

// explanation is what explain found, also its JSON output.
type explanation struct {
	Job      *longfairv1.Job `json:"-"`
	Account  string          `json:"account"`
	Policy   string          `json:"policy"`
	Rank     int             `json:"rank,omitempty"`
	Ranked   int             `json:"ranked_accounts,omitempty"`
	RankNote string          `json:"rank_reason,omitempty"`
	Beta     *float64        `json:"beta,omitempty"`
	// RankClass and RankKey are the account's rank key as the engine
	// compares it (class first, then the values, smaller first).
	RankClass string    `json:"rank_class,omitempty"`
	RankKey   []float64 `json:"rank_key,omitempty"`
	Reasons   []reason  `json:"reasons"`
}

type reason struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func (e *explanation) add(kind, format string, args ...any) {
	e.Reasons = append(e.Reasons, reason{Kind: kind, Text: fmt.Sprintf(format, args...)})
}

func explainCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("explain", explainHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("explain", args, 1, 1, "JOB_ID"); err != nil {
			return err
		}
		id, err := parseJobID(args[0])
		if err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		e, err := explain(ctx, c, id)
		if err != nil {
			return err
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, jsonObject{{"job", e.Job}, {"explanation", e}})
		case "csv":
			t := table{header: []string{"KIND", "TEXT"}}
			for _, r := range e.Reasons {
				t.add(r.Kind, r.Text)
			}
			return writeTable(out.stdout, "csv", t)
		}
		j := e.Job
		fmt.Fprintf(out.stdout, "job %d (%s/%s, %d task(s) of %s) is %s: %s\n", j.GetId(), j.GetAccount(), j.GetUser(), j.GetTasks(),
			fmtVector(j.GetDemand()), client.StateName(j.GetState()), taskCounts(j))
		for _, r := range e.Reasons {
			fmt.Fprintf(out.stdout, "  - %s: %s\n", r.Kind, r.Text)
		}
		return nil
	})
}

// explain asks the cluster for the engine's explanation of the job
// (Jobs.ExplainJob) and says it in words.
func explain(ctx context.Context, c *client.Client, id uint64) (*explanation, error) {
	// The leader explains over the view its scheduling passes use.
	x, err := c.Jobs().ExplainJob(client.ConsistentRead(ctx), &longfairv1.ExplainJobRequest{JobId: id})
	if err != nil {
		return nil, err
	}
	job := x.GetJob()
	e := &explanation{Job: job, Account: job.GetAccount()}
	if client.JobEnded(job) {
		e.add("ended", "the job ended %s at %s: nothing holds it back", client.StateName(job.GetState()), fmtTime(job.GetEndedAt()))
		if r := job.GetReason(); r != "" {
			e.add("reason", "it failed because %s", r)
		}
		return e, nil
	}
	switch x.GetWait() {
	case longfairv1.JobWait_JOB_WAIT_DEPENDENCY:
		e.add("dependency", "it waits for %s; until that is met the scheduler does not consider it, and it holds no node", job.GetWaiting())
		return e, nil
	case longfairv1.JobWait_JOB_WAIT_LIMIT:
		e.add("limit", "it waits for %s: its tasks start as others of the account's or user's end", job.GetWaiting())
		return e, nil
	case longfairv1.JobWait_JOB_WAIT_HELD:
		e.add("held", "it is held: no task starts until 'longfair release %d'", job.GetId())
		return e, nil
	case longfairv1.JobWait_JOB_WAIT_BEGIN:
		e.add("begin", "it waits for %s (--begin); until then the scheduler does not consider it", job.GetWaiting())
		return e, nil
	case longfairv1.JobWait_JOB_WAIT_THROTTLE:
		e.add("throttle", "%d of its tasks run, as many as its throttle allows (--throttle); the next starts when one ends", job.GetRunningTasks())
		return e, nil
	case longfairv1.JobWait_JOB_WAIT_QUEUED:
		e.add("queued", "its %d task(s) that have not started are placed in their nodes' look-ahead queues: each starts there as soon as a task on that node ends, without waiting for the scheduler (%d running)", job.GetQueuedTasks(), job.GetRunningTasks())
		return e, nil
	}
	if job.GetPendingTasks() == 0 {
		e.add("placed", "every task that has not ended is placed (%d running): nothing holds it back", job.GetRunningTasks())
		return e, nil
	}
	e.Policy = x.GetPolicy()
	explainNodes(e, x)
	explainRank(e, x)
	explainForecast(e, x)
	if ahead := x.GetAheadTasks(); ahead > 0 {
		e.add("queue", "%d pending task(s) of earlier %s jobs go before this job's (an account's jobs start in submission order)", ahead, job.GetAccount())
	}
	e.add("service units", "%s SU were held for this job at submission, so its cost is covered; %s has %s SU available for new jobs",
		fmtSU(job.GetHoldMicroSu()), job.GetAccount(), fmtSU(x.GetAvailableMicroSu()))
	explainTimeout(e, x)
	return e, nil
}

// explainNodes says what the job waits for on the up nodes.
func explainNodes(e *explanation, x *longfairv1.JobExplanation) {
	demand := x.GetJob().GetDemand()
	switch x.GetWait() {
	case longfairv1.JobWait_JOB_WAIT_NO_NODES:
		e.add("workers", "no worker node is up: nothing runs until workers join the cluster (start 'longfair worker' on the compute nodes; 'longfair nodes' lists them)")
	case longfairv1.JobWait_JOB_WAIT_NO_NODE_HOLDS:
		largest := "the largest up node has"
		if x.GetLargestShapes() > 1 {
			largest = "the largest up nodes have"
		}
		e.add("resources", "no up node can hold %s: %s %s. The job waits until a node that can hold a task is up, and does not hold back %s's later jobs meanwhile; or cancel it and resubmit with a smaller demand",
			x.GetLacking(), largest, x.GetLargestNodes(), e.Account)
	case longfairv1.JobWait_JOB_WAIT_NO_ROOM:
		e.add("resources", "waiting for resources: %d node(s) could hold a task of %s, but none has that free now; the closest is %s with %s free",
			x.GetHoldingNodes(), fmtVector(demand), x.GetClosestNode(), fmtVectorOf(x.GetClosestFree(), demand))
	case longfairv1.JobWait_JOB_WAIT_ROOM:
		names := slices.Clone(x.GetRoomNodes())
		if len(names) > 3 {
			names = append(names[:3], "…")
		}
		e.add("resources", "node(s) %s have room for a task now: it starts at the next scheduling pass unless accounts ranked before %s take the room first", strings.Join(names, ", "), e.Account)
	}
}

// explainForecast says when the job could start, and whether the
// scheduler reserves for it.
func explainForecast(e *explanation, x *longfairv1.JobExplanation) {
	nodes := ""
	if n := x.GetNodes(); n > 1 {
		nodes = fmt.Sprintf("its %d nodes are ", n)
	}
	switch {
	case x.GetReserved():
		e.add("reservation", "%sreserved for it from %s (when running tasks end at their walltimes, at the latest): it is the first ranked job that cannot start, and other work starts only where it cannot delay it",
			nodes, fmtTime(x.GetForecastStart()))
	case x.GetForecastStart() != nil:
		e.add("forecast", "it could start by %s, when running tasks end at their walltimes, unless jobs ranked before it take the room first", fmtTime(x.GetForecastStart()))
	}
}

// explainRank says where the job's account ranks among the accounts the
// next pass would serve, and by what rule.
func explainRank(e *explanation, x *longfairv1.JobExplanation) {
	e.Rank, e.Ranked, e.RankNote = int(x.GetRank()), int(x.GetRankedAccounts()), x.GetRankRule()
	e.RankClass, e.RankKey = x.GetRankClass(), x.GetRankKey()
	if x.GetHasBeta() {
		b := x.GetBeta()
		e.Beta = &b
	}
	if e.Rank == 0 {
		e.add("rank", "no up node can hold any pending task of %s, so the scheduler does not rank it; under %s %s", e.Account, x.GetPolicy(), x.GetRankRule())
		return
	}
	beta := "no β yet (it has had no baseline to fall short of)"
	if x.GetHasBeta() {
		beta = fmt.Sprintf("β %.3f", x.GetBeta())
		if x.GetBeta() < 1 {
			beta += ", under sharing loss"
		}
	}
	first := ""
	if e.Rank > 1 {
		// The server names the first account only to its members.
		first = "; another account goes first now"
		if f := x.GetFirstAccount(); f != "" {
			first = fmt.Sprintf("; %s goes first now", f)
		}
	}
	e.add("rank", "%s ranks %d of %d accounts with pending tasks under %s (%s, weight %s of %s)%s: %s",
		e.Account, e.Rank, e.Ranked, x.GetPolicy(), beta, fmtNumber(x.GetWeight()), fmtNumber(x.GetTotalWeight()), first, x.GetRankRule())
	if key := x.GetRankKey(); e.RankClass == "boosted" && len(key) > 0 {
		e.add("priority", "an admin boosted %s's next job to priority %d: it goes before every account the policy ranks, the highest priority first (fairness still counts what it uses)", e.Account, int64(-key[0]))
	}
}

// explainTimeout says how close the account is to the starvation
// time-out, past which it goes before everyone.
func explainTimeout(e *explanation, x *longfairv1.JobExplanation) {
	timeout := x.GetTimeout().AsDuration()
	if timeout <= 0 {
		e.add("time-out", "the starvation time-out is off ('longfair policy set --starvation-timeout 30m' turns it on)")
		return
	}
	waited := x.GetWaiting().AsDuration()
	if x.GetStarving() {
		e.add("time-out", "%s has waited %s for an allocation, past the %s starvation time-out: it goes before every account that is not starving", e.Account, fmtDur(waited), fmtDur(timeout))
	} else {
		e.add("time-out", "%s has waited %s of the %s starvation time-out; past it, it goes before every account that is not starving", e.Account, fmtDur(waited), fmtDur(timeout))
	}
}
