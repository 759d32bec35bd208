package sim_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
	"github.com/longfair/longfair/sim/reproduce"
)

func macroSmall(t *testing.T) (*sim.Workload, []*sim.Result) {
	t.Helper()
	w, err := reproduce.Macro(reproduce.MacroOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var results []*sim.Result
	for _, p := range []sched.Policy{sched.HMRF, sched.Static} {
		res, err := sim.Run(w, sim.Config{Settings: sim.SettingsFor(p)})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	return w, results
}

func TestTraceReportsAgreeWithTheResults(t *testing.T) {
	w, results := macroSmall(t)
	hmrf, static := results[0], results[1]

	var buf bytes.Buffer
	if err := sim.WriteJSON(&buf, results); err != nil {
		t.Fatal(err)
	}
	var js []struct {
		Policy      string
		Makespan    float64 `json:"makespan_s"`
		Utilization map[string]float64
		Accounts    []struct {
			Name    string
			Beta    float64 `json:"beta_final"`
			Speedup float64 `json:"speedup_vs_static"`
			Jobs    int
		}
		BetaOverTime struct {
			T    []float64 `json:"t_s"`
			Beta map[string][]*float64
		} `json:"beta_over_time"`
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js) != 2 || js[0].Policy != "hmrf" || js[0].Makespan != hmrf.Makespan.Seconds() || js[0].Utilization["cpu"] != hmrf.Utilization[0] {
		t.Fatalf("JSON summary %+v does not match the result", js[0])
	}
	for a, ar := range hmrf.Accounts {
		want := static.Accounts[a].MeanCompletion.Seconds() / ar.MeanCompletion.Seconds()
		if got := js[0].Accounts[a]; got.Name != ar.Name || got.Beta != ar.FinalBeta || math.Abs(got.Speedup-want) > 1e-9 || got.Jobs != ar.Jobs {
			t.Errorf("JSON account %+v, want %s β %v speedup %v jobs %d", got, ar.Name, ar.FinalBeta, want, ar.Jobs)
		}
		if len(js[0].BetaOverTime.Beta[ar.Name]) != len(js[0].BetaOverTime.T) {
			t.Errorf("β series of %s has %d points for %d times", ar.Name, len(js[0].BetaOverTime.Beta[ar.Name]), len(js[0].BetaOverTime.T))
		}
	}

	buf.Reset()
	if err := sim.WriteCSV(&buf, results); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*len(w.Accounts) || rows[0][0] != "policy" || rows[len(rows)-1][13] != "1" {
		t.Errorf("CSV has %d rows (want header + %d), last row %v (static's speedup over itself is 1)", len(rows), 2*len(w.Accounts), rows[len(rows)-1])
	}

	buf.Reset()
	if err := sim.WriteTable(&buf, w, results); err != nil {
		t.Fatal(err)
	}
	table := buf.String()
	for _, want := range []string{"macro-benchmark", "hmrf", "static", "User4", "speedup", "cpu util"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestPlotIsWellFormedSVGWithALinePerAccountAndPanel(t *testing.T) {
	_, results := macroSmall(t)
	var buf bytes.Buffer
	if err := sim.WritePlot(&buf, results); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	lines, texts := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "polyline":
				lines++
			case "text":
				texts++
			}
		}
	}
	if lines < 2*4 || texts == 0 {
		t.Errorf("%d polylines, %d texts; want at least one line per account in each of 2 panels", lines, texts)
	}
	if err := sim.WritePlot(io.Discard, nil); err == nil {
		t.Error("plotting nothing succeeded")
	}
}

func TestWorkloadTreeIsValidated(t *testing.T) {
	for name, spoil := range map[string]func(w *sim.Workload){
		"bad group path":   func(w *sim.Workload) { w.Groups[0].Path = "n1/" },
		"group twice":      func(w *sim.Workload) { w.Groups = append(w.Groups, w.Groups[0]) },
		"negative weight":  func(w *sim.Workload) { w.Groups[1].Weight = -2 },
		"bad account path": func(w *sim.Workload) { w.Accounts[0].Group = "//" },
	} {
		w, err := reproduce.DFFCluster(reproduce.DFFOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spoil(w)
		if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "group") {
			t.Errorf("%s: Validate said %v", name, err)
		}
	}
}

func TestTreePoliciesKeepTheReplaysPromises(t *testing.T) {
	// With the accounts in a tree, hdrf and dff run every task once, never
	// over a node's capacity, and never leave a task waiting that fits.
	w, err := reproduce.DFFCluster(reproduce.DFFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.Jobs {
		w.Jobs[i].Tasks /= 4
		w.Jobs[i].Submit = ledger.Time(time.Duration(i) * 45 * time.Second)
	}
	for _, p := range []sched.Policy{sched.HDRF, sched.DFF} {
		s := sched.DefaultSettings()
		s.Quantum = time.Minute
		s.Policy, s.Placement = p, sched.BestFit
		res := sim.RunChecked(t, w, sim.Config{Settings: s})
		if res.UnfinishedTasks != 0 {
			t.Errorf("%s: %d tasks unfinished", p, res.UnfinishedTasks)
		}
	}
}
