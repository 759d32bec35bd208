package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
)

// WriteJSON writes the results as JSON: one object for one policy, an array
// of objects for several. Slotted results have the form
//
//	{"policy":"hmrf","slots":[{"slot":0,"running":{"A":24,"B":4},
//	 "beta":{"A":2,"B":1},"aggregate":{"A":120,"B":20}},…],
//	 "totals":{"A":59,"B":59}}
//
// where running counts tasks started in the slot, beta is β and aggregate
// Σ_j Ü_ij (in the input's units) at the slot's end, and totals counts the
// tasks run in all. Other results carry the summary the table shows plus β
// over time. A β that is undefined (no baseline yet) is null.
func WriteJSON(w io.Writer, results []*Result) error {
	objs := make([]any, len(results))
	for i, r := range results {
		if r.Slots != nil {
			objs[i] = slottedJSON(r)
		} else {
			objs[i] = traceJSON(results, r)
		}
	}
	var v any = objs
	if len(objs) == 1 {
		v = objs[0]
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func slottedJSON(r *Result) *object {
	slots := make([]any, len(r.Slots))
	totals := make([]int, len(r.Accounts))
	for i, s := range r.Slots {
		running, beta, agg := &object{}, &object{}, &object{}
		for a, ar := range r.Accounts {
			running.add(ar.Name, s.Running[a])
			beta.add(ar.Name, jsonFloat(s.Beta[a]))
			agg.add(ar.Name, jsonFloat(s.Aggregate[a]))
			totals[a] += s.Running[a]
		}
		slots[i] = (&object{}).add("slot", s.Slot).add("running", running).add("beta", beta).add("aggregate", agg)
	}
	tot := &object{}
	for a, ar := range r.Accounts {
		tot.add(ar.Name, totals[a])
	}
	return (&object{}).add("policy", r.Policy).add("slots", slots).add("totals", tot)
}

func traceJSON(results []*Result, r *Result) *object {
	util := &object{}
	for x, name := range r.Resources {
		util.add(name, jsonFloat(r.Utilization[x]))
	}
	accounts := make([]any, len(r.Accounts))
	for a, ar := range r.Accounts {
		o := (&object{}).
			add("name", ar.Name).
			add("weight", jsonFloat(ar.Weight)).
			add("contribution_share", jsonFloat(ar.ContributionShare)).
			add("usage_share", jsonFloat(ar.UsageShare)).
			add("usage", vectorObject(r.Resources, ar.Usage)).
			add("beta_final", jsonFloat(ar.FinalBeta)).
			add("beta_min", jsonFloat(ar.MinBeta)).
			add("tasks_run", ar.TasksRun).
			add("jobs", ar.Jobs).
			add("unfinished_jobs", ar.Unfinished).
			add("mean_wait_s", jsonFloat(ar.MeanWait.Seconds())).
			add("mean_completion_s", jsonFloat(ar.MeanCompletion.Seconds())).
			add("mean_slowdown", jsonFloat(ar.MeanSlowdown)).
			add("discrimination_share_s", jsonFloat(ar.Discrimination))
		if s, ok := Speedup(results, r, a); ok {
			o.add("speedup_vs_static", jsonFloat(s))
		}
		accounts[a] = o
	}
	unsched := make([]any, len(r.Unschedulable))
	for i, u := range r.Unschedulable {
		unsched[i] = (&object{}).add("job_id", u.ID).add("account", u.Account).add("tasks", u.Tasks).add("reason", u.Reason)
	}
	times := make([]jsonFloat, len(r.Samples.Times))
	for k, t := range r.Samples.Times {
		times[k] = jsonFloat(float64(t) / 1e9)
	}
	betas := &object{}
	for a, ar := range r.Accounts {
		series := make([]jsonFloat, len(r.Samples.Beta[a]))
		for k, b := range r.Samples.Beta[a] {
			series[k] = jsonFloat(b)
		}
		betas.add(ar.Name, series)
	}
	return (&object{}).
		add("policy", r.Policy).
		add("window", r.Window.String()).
		add("quantum_s", jsonFloat(r.Settings.Quantum.Seconds())).
		add("placement", r.Settings.Placement).
		add("timeout_s", jsonFloat(r.Settings.Timeout.Seconds())).
		add("workload", r.Workload).
		add("start_s", jsonFloat(float64(r.Start)/1e9)).
		add("end_s", jsonFloat(float64(r.End)/1e9)).
		add("makespan_s", jsonFloat(r.Makespan.Seconds())).
		add("utilization", util).
		add("mean_completion_s", jsonFloat(r.MeanCompletion().Seconds())).
		addIf(r.Settings.Backfill != "", "backfill", backfillName(r.Settings.Backfill)).
		addIf(r.Settings.Backfill != "", "mean_wait_s", jsonFloat(r.MeanWait.Seconds())).
		addIf(r.Settings.Backfill != "", "max_wait_s", jsonFloat(r.MaxWait.Seconds())).
		addIf(r.Settings.Backfill != "", "mean_bounded_slowdown", jsonFloat(r.MeanBoundedSlowdown)).
		add("tasks_run", r.TotalTasksRun()).
		add("unfinished_tasks", r.UnfinishedTasks).
		add("never_submitted_jobs", r.NeverSubmitted).
		add("unschedulable", unsched).
		add("events", r.Events).
		add("passes", r.Passes).
		add("discrimination_variance", jsonFloat(r.DiscriminationVariance)).
		add("accounts", accounts).
		add("beta_over_time", (&object{}).add("t_s", times).add("beta", betas))
}

func vectorObject(names []string, v []float64) *object {
	o := &object{}
	for x, name := range names {
		o.add(name, jsonFloat(v[x]))
	}
	return o
}

// object is a JSON object that keeps its keys in the order they were added
// (accounts in workload order, not sorted as a Go map would be).
type object struct {
	keys []string
	vals []any
}

func (o *object) add(key string, v any) *object {
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
	return o
}

// addIf is add when cond holds: keys that only some runs report (those
// that chose a backfill mode), so other runs' JSON stays as it was.
func (o *object) addIf(cond bool, key string, v any) *object {
	if cond {
		return o.add(key, v)
	}
	return o
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		val, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonFloat is a float64 that encodes infinities and NaN as null, which
// JSON cannot otherwise express.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return []byte("null"), nil
	}
	return json.Marshal(x)
}
