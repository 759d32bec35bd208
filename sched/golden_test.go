package sched_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Golden scenarios: one small view per policy under testdata/golden
// (<name>.json, written by hand, for a human to read), and what the engine
// does with it (<name>.golden: the placements in order, which account was
// served first, what each got, what is left free). The .golden files are
// written by the engine, never by hand:
//
//	go test ./sched -run TestGoldenScenarios -update-golden
//
// A change of a .golden file in a commit is a change of what a policy
// decides: review it as one.
var updateGolden = flag.Bool("update-golden", false, "rewrite sched/testdata/golden/*.golden from what the engine does now")

const goldenDir = "testdata/golden"

// scenario is a View written for people: vectors by resource name,
// durations and times as Go durations (times from the epoch).
type scenario struct {
	About     string          `json:"about"`
	Now       string          `json:"now"`
	Resources []string        `json:"resources"`
	Settings  scenarioSetting `json:"settings"`
	Groups    []struct {
		Path   string  `json:"path"`
		Weight float64 `json:"weight"`
	} `json:"groups,omitempty"`
	Nodes []struct {
		ID       string             `json:"id"`
		Capacity map[string]float64 `json:"capacity"`
		// Free defaults to the capacity.
		Free map[string]float64 `json:"free,omitempty"`
	} `json:"nodes"`
	Accounts []struct {
		Name         string             `json:"name"`
		Weight       float64            `json:"weight"`
		Running      map[string]float64 `json:"running,omitempty"`
		Usage        map[string]float64 `json:"usage,omitempty"`
		Baseline     map[string]float64 `json:"baseline,omitempty"`
		BaselineRate map[string]float64 `json:"baseline_rate,omitempty"`
		WaitingSince string             `json:"waiting_since,omitempty"`
		Group        string             `json:"group,omitempty"`
		Share        float64            `json:"share,omitempty"`
		Latency      *struct {
			Class    string             `json:"class"`
			Start    string             `json:"start,omitempty"`
			Period   string             `json:"period"`
			Deadline string             `json:"deadline"`
			Burst    map[string]float64 `json:"burst"`
			Used     map[string]float64 `json:"used,omitempty"`
		} `json:"latency,omitempty"`
		Jobs []struct {
			ID         uint64             `json:"id"`
			Demand     map[string]float64 `json:"demand"`
			FirstIndex int                `json:"first_index,omitempty"`
			Pending    int                `json:"pending"`
			Walltime   string             `json:"walltime,omitempty"`
		} `json:"jobs"`
	} `json:"accounts"`
}

type scenarioSetting struct {
	Policy       string  `json:"policy"`
	Quantum      string  `json:"quantum"`
	Timeout      string  `json:"timeout,omitempty"`
	Placement    string  `json:"placement"`
	LTRFResource string  `json:"ltrf_resource,omitempty"`
	QKnoblerRho  float64 `json:"qknobler_rho,omitempty"`
}

// view builds the engine's View, refusing what it cannot read.
func (s *scenario) view() (*sched.View, error) {
	var errs []string
	dur := func(what, text string) time.Duration {
		if text == "" {
			return 0
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", what, err))
		}
		return d
	}
	vec := func(what string, m map[string]float64) ledger.Vector {
		v := ledger.NewVector(len(s.Resources))
		for name, x := range m {
			k := slices.Index(s.Resources, name)
			if k < 0 {
				errs = append(errs, fmt.Sprintf("%s: unknown resource %q", what, name))
				continue
			}
			v[k] = x
		}
		return v
	}
	at := func(what, text string) ledger.Time { return ledger.Time(dur(what, text)) }

	v := &sched.View{Now: at("now", s.Now), Resources: s.Resources}
	for _, g := range s.Groups {
		v.Groups = append(v.Groups, sched.Group{Path: g.Path, Weight: g.Weight})
	}
	v.Settings = sched.Settings{
		Policy:      sched.Policy(s.Settings.Policy),
		Quantum:     dur("quantum", s.Settings.Quantum),
		Timeout:     dur("timeout", s.Settings.Timeout),
		Placement:   sched.PlacementStrategy(s.Settings.Placement),
		QKnoblerRho: s.Settings.QKnoblerRho,
	}
	if r := s.Settings.LTRFResource; r != "" {
		v.Settings.LTRFResource = slices.Index(s.Resources, r)
	}
	for _, n := range s.Nodes {
		free := n.Free
		if free == nil {
			free = n.Capacity
		}
		v.Nodes = append(v.Nodes, sched.Node{ID: n.ID, Capacity: vec(n.ID+" capacity", n.Capacity), Free: vec(n.ID+" free", free)})
	}
	for _, a := range s.Accounts {
		acct := sched.Account{
			Name: a.Name, Weight: a.Weight,
			Running: vec(a.Name+" running", a.Running), Usage: vec(a.Name+" usage", a.Usage),
			Baseline: vec(a.Name+" baseline", a.Baseline), BaselineRate: vec(a.Name+" baseline_rate", a.BaselineRate),
			WaitingSince: at(a.Name+" waiting_since", a.WaitingSince),
			Group:        a.Group, Share: a.Share,
		}
		if l := a.Latency; l != nil {
			var class sched.QueueClass
			if err := class.UnmarshalText([]byte(l.Class)); err != nil {
				errs = append(errs, fmt.Sprintf("%s latency class: %v", a.Name, err))
			}
			acct.Latency = &sched.LatencyQueue{
				LatencySpec: sched.LatencySpec{
					Start: at(a.Name+" latency start", l.Start), Period: dur(a.Name+" period", l.Period),
					Deadline: dur(a.Name+" deadline", l.Deadline), Burst: vec(a.Name+" burst", l.Burst),
				},
				Class: class,
			}
			if l.Used != nil {
				acct.Latency.Used = vec(a.Name+" used", l.Used)
			}
		}
		for _, j := range a.Jobs {
			acct.Queue = append(acct.Queue, sched.Job{
				ID: j.ID, Demand: vec(fmt.Sprintf("%s job %d demand", a.Name, j.ID), j.Demand),
				FirstIndex: j.FirstIndex, Pending: j.Pending, Walltime: dur("walltime", j.Walltime),
			})
		}
		v.Accounts = append(v.Accounts, acct)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return v, nil
}

// paperTasks are the tasks per account the H-MRF paper gives for the
// scenarios that are its examples (see their "about"), checked before the
// .golden is compared or written, so that -update-golden cannot write an
// answer that contradicts the paper.
var paperTasks = map[string][]int{
	"drf":   {5, 10},  // Example 1, scaled by 1/5
	"af":    {24, 4},  // Table 1(a), first slot
	"ltdrf": {35, 30}, // Example 4 at t2
	"ltaf":  {42, 16},
	"hmrf":  {40, 20},
}

// TestGoldenScenarios runs the engine on every scenario and compares what
// it decides with the scenario's .golden file. Every policy the engine
// offers has at least one scenario.
func TestGoldenScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[sched.Policy]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var s scenario
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v, err := s.view()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			covered[v.Settings.Policy] = true
			placements, err := sched.NewEngine().Schedule(v)
			if err != nil {
				t.Fatalf("%s: the engine refuses the view: %v", path, err)
			}
			if want, ok := paperTasks[name]; ok {
				tasks := make([]int, len(v.Accounts))
				for _, p := range placements {
					tasks[p.Account]++
				}
				if !slices.Equal(tasks, want) {
					t.Fatalf("%s: the engine runs %v tasks per account, the paper %v: the scenario no longer encodes the paper's example, or the policy changed (paper_test.go)", name, tasks, want)
				}
			}
			got := renderOutcome(name, &s, v, placements)
			golden := filepath.Join(goldenDir, name+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v: write it with -update-golden and review it", err)
			}
			if got != string(want) {
				t.Errorf("%s: the engine now decides differently from %s. If that is meant, rewrite it with -update-golden and review the diff.\n--- %s\n%s\n--- now\n%s",
					name, golden, golden, want, got)
			}
		})
	}
	for _, p := range sched.Policies() {
		if !covered[p] {
			t.Errorf("policy %s has no golden scenario: add %s/%s.json and write its .golden with -update-golden", p, goldenDir, p)
		}
	}
}

// renderOutcome prints the pass: the placements in order (consecutive
// tasks of a job on one node on one line), the accounts in the order they
// were first served with what they got, and what is left free.
func renderOutcome(name string, s *scenario, v *sched.View, ps []sched.Placement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s.json under %s: what the engine decides. Written by\n", name, v.Settings.Policy)
	b.WriteString("# `go test ./sched -run TestGoldenScenarios -update-golden`; never edit by hand.\n")
	fmt.Fprintf(&b, "# %s\n\n", s.About)

	b.WriteString("placements, in the order the pass made them:\n")
	if len(ps) == 0 {
		b.WriteString("  none\n")
	}
	n := 0
	for i := 0; i < len(ps); {
		p := ps[i]
		j := i + 1
		for j < len(ps) && ps[j].Account == p.Account && ps[j].Job == p.Job && ps[j].Node == p.Node && ps[j].Task == ps[j-1].Task+1 {
			j++
		}
		n++
		acct := v.Accounts[p.Account]
		tasks := fmt.Sprintf("task %d", p.Task)
		if j-i > 1 {
			tasks = fmt.Sprintf("tasks %d-%d", p.Task, ps[j-1].Task)
		}
		fmt.Fprintf(&b, "  %2d. %s job %d %s → %s\n", n, acct.Name, acct.Queue[p.Job].ID, tasks, v.Nodes[p.Node].ID)
		i = j
	}

	got := make([]ledger.Vector, len(v.Accounts))
	count := make([]int, len(v.Accounts))
	free := make([]ledger.Vector, len(v.Nodes))
	for i := range v.Nodes {
		free[i] = v.Nodes[i].Free.Clone()
	}
	var order []int
	for _, p := range ps {
		if got[p.Account] == nil {
			got[p.Account] = ledger.NewVector(len(v.Resources))
			order = append(order, p.Account)
		}
		d := v.Accounts[p.Account].Queue[p.Job].Demand
		got[p.Account].Add(d)
		free[p.Node].AddScaled(d, -1)
		count[p.Account]++
	}
	b.WriteString("\nserved, in the order each account first got a task:\n")
	for i, a := range order {
		fmt.Fprintf(&b, "  %d. %s: %s, %s\n", i+1, v.Accounts[a].Name, plural(count[a], "task"), showVector(v.Resources, got[a]))
	}
	for a := range v.Accounts {
		if got[a] == nil {
			fmt.Fprintf(&b, "  -  %s: nothing\n", v.Accounts[a].Name)
		}
	}
	b.WriteString("\nfree after the pass:\n")
	for i := range v.Nodes {
		fmt.Fprintf(&b, "  %s: %s\n", v.Nodes[i].ID, showVector(v.Resources, free[i]))
	}
	return b.String()
}

func showVector(names []string, v ledger.Vector) string {
	parts := make([]string, len(v))
	for i, x := range v {
		// Rounded to what a person compares: sums of floats leave residue.
		parts[i] = names[i] + " " + strconv.FormatFloat(x, 'g', 10, 64)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
