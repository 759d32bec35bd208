package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

func validWorkload() *Workload {
	return &Workload{
		Name: "w", Resources: []string{"cpu", "mem"},
		Nodes:    []Node{{ID: "n", Capacity: ledger.Vector{4, 8}}},
		Accounts: []Account{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}},
		Jobs: []Job{
			{ID: 1, Account: 0, Demand: ledger.Vector{1, 1}, Tasks: 2, Runtime: time.Second},
			{ID: 2, Account: 1, Demand: ledger.Vector{1, 0}, Tasks: 1, Runtime: time.Second, After: &Dependency{Job: 0}},
		},
	}
}

func TestValidateRefusesWorkloadsTheDriverCannotReplay(t *testing.T) {
	if err := validWorkload().Validate(); err != nil {
		t.Fatalf("valid workload refused: %v", err)
	}
	cases := []struct {
		name  string
		spoil func(w *Workload)
		says  string
	}{
		{"no resources", func(w *Workload) { w.Resources = nil }, "names no resources"},
		{"duplicate resource", func(w *Workload) { w.Resources = []string{"cpu", "cpu"} }, "distinct"},
		{"units", func(w *Workload) { w.Units = []string{"cores"} }, "units"},
		{"no nodes", func(w *Workload) { w.Nodes = nil }, "no nodes"},
		{"node vector", func(w *Workload) { w.Nodes[0].Capacity = ledger.Vector{1} }, "capacity"},
		{"no accounts", func(w *Workload) { w.Accounts = nil; w.Jobs = nil }, "no accounts"},
		{"duplicate account", func(w *Workload) { w.Accounts[1].Name = "a" }, "distinct"},
		{"negative weight", func(w *Workload) { w.Accounts[0].Weight = -1 }, "weight"},
		{"infinite weight", func(w *Workload) { w.Accounts[0].Weight = math.Inf(1) }, "weight"},
		{"account index", func(w *Workload) { w.Jobs[0].Account = 5 }, "out of range"},
		{"negative demand", func(w *Workload) { w.Jobs[0].Demand = ledger.Vector{-1, 1} }, "demand"},
		{"zero demand", func(w *Workload) { w.Jobs[0].Demand = ledger.Vector{0, 0} }, "demand is zero"},
		{"no tasks", func(w *Workload) { w.Jobs[0].Tasks = 0 }, "at least one"},
		{"zero runtime", func(w *Workload) { w.Jobs[0].Runtime = 0 }, "runtime"},
		{"forward dependency", func(w *Workload) { w.Jobs[1].After.Job = 1 }, "earlier job"},
		{"negative delay", func(w *Workload) { w.Jobs[1].After.Delay = -time.Second }, "delay"},
		{"negative submit", func(w *Workload) { w.Jobs[0].Submit = -1 }, "submit time"},
	}
	for _, c := range cases {
		w := validWorkload()
		c.spoil(w)
		err := w.Validate()
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.says)
		}
		if _, runErr := Run(w, Config{Settings: sched.DefaultSettings()}); runErr == nil {
			t.Errorf("%s: Run accepted the workload", c.name)
		}
	}
}

func TestRunRefusesBadSettingsAndWindows(t *testing.T) {
	w := validWorkload()
	s := sched.DefaultSettings()
	s.Quantum = 0
	if _, err := Run(w, Config{Settings: s}); err == nil || !strings.Contains(err.Error(), "quantum") {
		t.Errorf("zero quantum: %v", err)
	}
	if _, err := Run(w, Config{Settings: sched.DefaultSettings(), Window: ledger.Window{Kind: ledger.WindowDecay}}); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("decay without half-life: %v", err)
	}
}
