package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/longfair/longfair/sched"
)

// The paper's examples, in the slotted JSON users feed `longfair sim`. These
// tests go through the loader, the driver with the fairness book, and the
// JSON report, so they check the whole path a reader of the README takes.
const table1Input = `{"capacity":{"cpu":100,"mem":100},
 "accounts":[{"name":"A","weight":1,"task":{"cpu":1,"mem":4}},{"name":"B","weight":1,"task":{"cpu":4,"mem":1}}],
 "slots":[{"A":30,"B":4},{"A":20,"B":24},{"A":27,"B":8},{"A":10,"B":30}]}`

const example4Input = `{"capacity":{"cpu":100,"mem":100},
 "accounts":[{"name":"A","weight":1,"task":{"cpu":1,"mem":2}},{"name":"B","weight":1,"task":{"cpu":1,"mem":1}}],
 "slots":[{"A":15,"B":80},{"A":60,"B":30}]}`

// slottedReport is the JSON shape the issue specifies for slotted input.
type slottedReport struct {
	Policy string `json:"policy"`
	Slots  []struct {
		Slot      int                 `json:"slot"`
		Running   map[string]int      `json:"running"`
		Beta      map[string]*float64 `json:"beta"`
		Aggregate map[string]float64  `json:"aggregate"`
	} `json:"slots"`
	Totals map[string]int `json:"totals"`
}

func replaySlotted(t *testing.T, input string, policies ...sched.Policy) []slottedReport {
	t.Helper()
	w, err := LoadSlotted("paper.json", strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var results []*Result
	for _, p := range policies {
		s := sched.DefaultSettings()
		s.Policy, s.Quantum = p, SlotLength
		res, err := Run(w, Config{Settings: s})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		results = append(results, res)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, results); err != nil {
		t.Fatal(err)
	}
	var reports []slottedReport
	if len(policies) == 1 {
		reports = make([]slottedReport, 1)
		err = json.Unmarshal(buf.Bytes(), &reports[0])
	} else {
		err = json.Unmarshal(buf.Bytes(), &reports)
	}
	if err != nil {
		t.Fatalf("the JSON report does not have the documented shape: %v\n%s", err, buf.String())
	}
	return reports
}

func runningPerSlot(r slottedReport) [][2]int {
	var out [][2]int
	for _, s := range r.Slots {
		out = append(out, [2]int{s.Running["A"], s.Running["B"]})
	}
	return out
}

func TestSimReproducesTable1(t *testing.T) {
	reports := replaySlotted(t, table1Input, sched.DRF, sched.HMRF)
	want := map[string]struct {
		slots  [][2]int
		totals map[string]int
	}{
		"drf":  {[][2]int{{24, 4}, {20, 20}, {22, 12}, {20, 20}}, map[string]int{"A": 86, "B": 56}},
		"hmrf": {[][2]int{{24, 4}, {4, 24}, {23, 8}, {8, 23}}, map[string]int{"A": 59, "B": 59}},
	}
	for _, r := range reports {
		w := want[r.Policy]
		if got := runningPerSlot(r); !reflect.DeepEqual(got, w.slots) {
			t.Errorf("%s: running per slot %v, the paper's Table 1 says %v", r.Policy, got, w.slots)
		}
		if !reflect.DeepEqual(r.Totals, w.totals) {
			t.Errorf("%s: totals %v, the paper's Table 1 says %v", r.Policy, r.Totals, w.totals)
		}
	}
}

func TestSimReproducesExample4HMRF(t *testing.T) {
	r := replaySlotted(t, example4Input, sched.HMRF)[0]
	want := []struct {
		running   [2]int
		beta      [2]float64
		aggregate [2]float64
	}{
		{[2]int{15, 70}, [2]float64{1, 1.4}, [2]float64{45, 140}},
		{[2]int{40, 20}, [2]float64{1.375, 1}, [2]float64{165, 180}},
	}
	if len(r.Slots) != len(want) {
		t.Fatalf("%d slots reported, want %d", len(r.Slots), len(want))
	}
	for i, w := range want {
		s := r.Slots[i]
		if got := [2]int{s.Running["A"], s.Running["B"]}; got != w.running {
			t.Errorf("t%d: running %v, the paper says %v", i+1, got, w.running)
		}
		for k, name := range []string{"A", "B"} {
			if b := s.Beta[name]; b == nil || math.Abs(*b-w.beta[k]) > 1e-9 {
				t.Errorf("t%d: β_%s = %v, the paper says %v", i+1, name, b, w.beta[k])
			}
			if a := s.Aggregate[name]; math.Abs(a-w.aggregate[k]) > 1e-9 {
				t.Errorf("t%d: aggregate of %s = %v, the paper says %v", i+1, name, a, w.aggregate[k])
			}
		}
	}
}
