package sim

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSyntheticHasExactlyTheTasksAndTheOfferedLoad(t *testing.T) {
	opt := SyntheticOptions{Tasks: 20000, Accounts: 5, Nodes: 10, Load: 0.5, Seed: 3}
	w, err := Synthetic(opt)
	if err != nil {
		t.Fatal(err)
	}
	if w.TotalTasks() != opt.Tasks || len(w.Accounts) != 5 || len(w.Nodes) != 10 {
		t.Fatalf("%d tasks, %d accounts, %d nodes; want %d, 5, 10", w.TotalTasks(), len(w.Accounts), len(w.Nodes), opt.Tasks)
	}
	// Offered core-seconds over the submission span, against the cores.
	work := 0.0
	var first, last time.Duration
	for i, j := range w.Jobs {
		work += float64(j.Tasks) * j.Demand[0] * j.Runtime.Seconds()
		if j.Tasks < 1 || j.Tasks > syntheticMaxArray || j.Runtime < syntheticMinRun || j.Runtime > syntheticMaxRun {
			t.Fatalf("job %d out of range: %d tasks of %v", i, j.Tasks, j.Runtime)
		}
		s := time.Duration(j.Submit)
		if i == 0 {
			first = s
		}
		if s < last {
			t.Fatalf("job %d submitted before job %d", i, i-1)
		}
		last = s
	}
	load := work / (last - first + 1).Seconds() / (syntheticCores * 10)
	if math.Abs(load-opt.Load) > 0.1 {
		t.Errorf("offered load %.2f, want about %.2f", load, opt.Load)
	}
	again, _ := Synthetic(opt)
	if !reflect.DeepEqual(w, again) {
		t.Error("the same seed gave different workloads")
	}
}

func TestSyntheticRefusesNonsense(t *testing.T) {
	for _, opt := range []SyntheticOptions{{Tasks: 0}, {Tasks: 10, Nodes: -1}, {Tasks: 10, Load: math.NaN()}} {
		if _, err := Synthetic(opt); err == nil || !strings.Contains(err.Error(), "synthetic workload") {
			t.Errorf("%+v: error %v, want a refusal", opt, err)
		}
	}
}
