package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/ledger"
)

const explainHelp = `Usage: longfair explain JOB_ID [flags]

Says why a pending job has not started: where its account ranks under the
cluster's policy and why (its β, its share), and what the job waits for —
a worker node at all, a node big enough (or with a MIC), free resources,
earlier jobs of the same account, its service units, the starvation
time-out.

The rank is estimated from the fairness report as of now; the leader ranks
with usage projected to the end of its scheduling quantum, so close ranks
may come out the other way.

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
	Reasons  []reason        `json:"reasons"`
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

// explain gathers the job, the fairness report, the nodes, the settings
// and the balance, and says what holds the job back.
func explain(ctx context.Context, c *client.Client, id uint64) (*explanation, error) {
	job, err := c.Jobs().GetJob(ctx, &longfairv1.GetJobRequest{JobId: id})
	if err != nil {
		return nil, err
	}
	e := &explanation{Job: job, Account: job.GetAccount()}
	if client.JobEnded(job) {
		e.add("ended", "the job ended %s at %s: nothing holds it back", client.StateName(job.GetState()), fmtTime(job.GetEndedAt()))
		return e, nil
	}
	if job.GetPendingTasks() == 0 {
		e.add("placed", "every task that has not ended is placed (%d running): nothing holds it back", job.GetRunningTasks())
		return e, nil
	}
	settings, err := c.Operator().GetSettings(ctx, &longfairv1.GetSettingsRequest{})
	if err != nil {
		return nil, err
	}
	report, err := c.Fairness().GetFairnessReport(ctx, &longfairv1.GetFairnessReportRequest{})
	if err != nil {
		return nil, err
	}
	nodes, err := c.Operator().ListNodes(ctx, &longfairv1.ListNodesRequest{})
	if err != nil {
		return nil, err
	}
	balance, err := c.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: job.GetAccount()})
	if err != nil {
		return nil, err
	}
	up := upShapes(nodes.GetNodes(), job.GetDemand())
	// Earlier jobs no up node can hold are passed over by the scheduler:
	// they hold nothing back.
	ahead := int64(0)
	for j, err := range c.AllJobs(ctx, &longfairv1.ListJobsRequest{Account: job.GetAccount(),
		States: []longfairv1.JobState{longfairv1.JobState_JOB_STATE_PENDING, longfairv1.JobState_JOB_STATE_RUNNING}}) {
		if err != nil {
			return nil, err
		}
		if j.GetId() < id && up.holds(j.GetDemand()) {
			ahead += j.GetPendingTasks()
		}
	}
	e.Policy = settings.GetPolicy()

	explainNodes(e, job, nodes.GetNodes(), up)
	explainRank(e, settings, report)
	if ahead > 0 {
		e.add("queue", "%d pending task(s) of earlier %s jobs go before this job's (an account's jobs start in submission order)", ahead, job.GetAccount())
	}
	e.add("service units", "%s SU were held for this job at submission, so its cost is covered; %s has %s SU available for new jobs",
		fmtSU(job.GetHoldMicroSu()), job.GetAccount(), fmtSU(balance.GetAvailableMicroSu()))
	explainTimeout(e, settings, report, job.GetAccount())
	return e, nil
}

// explainNodes says whether any up node could ever hold a task, and
// whether one can now.
func explainNodes(e *explanation, job *longfairv1.Job, nodes []*longfairv1.Node, up nodeShapes) {
	demand := job.GetDemand()
	if len(up.shapes) == 0 {
		e.add("workers", "no worker node is up: nothing runs until workers join the cluster (start 'longfair worker' on the compute nodes; 'longfair nodes' lists them)")
		return
	}
	if !up.holds(demand) {
		largest := "the largest up node has"
		if len(up.shapes) > 1 {
			largest = "the largest up nodes have"
		}
		d := up.vector(demand)
		e.add("resources", "no up node can hold %s: %s %s. The job waits until a node that can hold a task is up, and does not hold back %s's later jobs meanwhile; or cancel it and resubmit with a smaller demand",
			up.shapes.Lacking(up.names, d), largest, up.shapes.Describe(up.names), job.GetAccount())
		return
	}
	var big, free []*longfairv1.Node
	for _, n := range nodes {
		if n.GetUp() && fits(demand, n.GetCapacity()) {
			big = append(big, n)
			if fits(demand, n.GetFree()) {
				free = append(free, n)
			}
		}
	}
	if len(free) == 0 {
		best, bestScore := big[0], -1.0
		for _, n := range big {
			score := math.Inf(1)
			for k, d := range demand {
				if d > 0 {
					score = math.Min(score, n.GetFree()[k]/d)
				}
			}
			if score > bestScore {
				best, bestScore = n, score
			}
		}
		e.add("resources", "waiting for resources: %d node(s) could hold a task of %s, but none has that free now; the closest is %s with %s free",
			len(big), fmtVector(demand), best.GetId(), fmtVectorOf(best.GetFree(), demand))
		return
	}
	names := make([]string, 0, len(free))
	for _, n := range free {
		names = append(names, n.GetId())
	}
	sort.Strings(names)
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	e.add("resources", "node(s) %s have room for a task now: it starts at the next scheduling pass unless accounts ranked before %s take the room first", strings.Join(names, ", "), job.GetAccount())
}

// nodeShapes are the largest shapes of the up nodes (ledger.Shapes, as
// the scheduler computes them) over names: the resources of the nodes and
// of the explained job's demand.
type nodeShapes struct {
	names  []string
	shapes ledger.Shapes
}

func upShapes(nodes []*longfairv1.Node, demand map[string]float64) nodeShapes {
	maps := []map[string]float64{demand}
	for _, n := range nodes {
		if n.GetUp() {
			maps = append(maps, n.GetCapacity())
		}
	}
	s := nodeShapes{names: resourceOrder(maps...)}
	for _, n := range nodes {
		if n.GetUp() {
			s.shapes = s.shapes.Add(s.vector(n.GetCapacity()))
		}
	}
	return s
}

// vector is m over s.names; resources outside them are left out.
func (s nodeShapes) vector(m map[string]float64) ledger.Vector {
	v := ledger.NewVector(len(s.names))
	for j, k := range s.names {
		v[j] = m[k]
	}
	return v
}

// holds reports whether an idle up node could run a task of demand; a
// resource no up node has cannot be held.
func (s nodeShapes) holds(demand map[string]float64) bool {
	for k, q := range demand {
		if q > 0 && !slices.Contains(s.names, k) {
			return false
		}
	}
	return s.shapes.Holds(s.vector(demand))
}

// fits reports whether have holds demand in every resource.
func fits(demand, have map[string]float64) bool {
	for k, d := range demand {
		if d > have[k] {
			return false
		}
	}
	return true
}
