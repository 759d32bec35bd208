package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/sched"
)

func slottedResults(t *testing.T, policies ...sched.Policy) (*Workload, []*Result) {
	t.Helper()
	w, err := LoadSlotted("ex3.json", strings.NewReader(example3))
	if err != nil {
		t.Fatal(err)
	}
	var results []*Result
	for _, p := range policies {
		s := settingsFor(p)
		s.Quantum = time.Second
		res, err := Run(w, Config{Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	return w, results
}

func TestSlottedJSONHasTheDocumentedShape(t *testing.T) {
	_, results := slottedResults(t, sched.HMRF)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, results); err != nil {
		t.Fatal(err)
	}
	// Slot 0 of Example 3 is forced (B has only 4 tasks, A takes the rest):
	// A runs 24 tasks of <1,4> (β 24/12 = 2, ΣÜ 120), B 4 of <4,1> (β 1, ΣÜ 20).
	prefix := `{"policy":"hmrf","slots":[{"slot":0,"running":{"A":24,"B":4},"beta":{"A":2,"B":1},"aggregate":{"A":120,"B":20}},`
	if !strings.HasPrefix(buf.String(), prefix) {
		t.Errorf("JSON starts %.160s\nwant prefix %s", buf.String(), prefix)
	}
	var got struct {
		Policy string
		Slots  []struct {
			Slot      int
			Running   map[string]int
			Beta      map[string]*float64
			Aggregate map[string]float64
		}
		Totals map[string]int
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	sum := map[string]int{}
	for i, s := range got.Slots {
		if s.Slot != i {
			t.Errorf("slot %d numbered %d", i, s.Slot)
		}
		for k, v := range s.Running {
			sum[k] += v
		}
	}
	if len(got.Slots) != 4 || sum["A"] != got.Totals["A"] || sum["B"] != got.Totals["B"] {
		t.Errorf("%d slots, totals %v, running sums %v", len(got.Slots), got.Totals, sum)
	}

	_, two := slottedResults(t, sched.HMRF, sched.DRF)
	buf.Reset()
	if err := WriteJSON(&buf, two); err != nil {
		t.Fatal(err)
	}
	var arr []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &arr); err != nil || len(arr) != 2 || arr[1]["policy"] != "drf" {
		t.Errorf("two policies: %v, %v; want an array of two objects", err, arr)
	}
}

func TestJSONWritesUndefinedBetaAsNull(t *testing.T) {
	in := `{"capacity":{"cpu":4},"accounts":[{"name":"A","task":{"cpu":1}},{"name":"Idle","task":{"cpu":1}}],"slots":[{"A":3}]}`
	w, err := LoadSlotted("x.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(w, Config{Settings: settingsFor(sched.HMRF)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Result{res}); err != nil {
		t.Fatal(err)
	}
	// A runs 3 tasks on 4 cpus; alone in its half it would run 2: β = 1.5.
	if !strings.Contains(buf.String(), `"beta":{"A":1.5,"Idle":null}`) {
		t.Errorf("JSON %s: want β of A = 3/2 and Idle's undefined β as null", buf.String())
	}
}

func TestSlottedTableShowsEverySlot(t *testing.T) {
	w, results := slottedResults(t, sched.HMRF)
	var buf bytes.Buffer
	if err := WriteTable(&buf, w, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	slots := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 7 && (f[0] == "0" || f[0] == "1" || f[0] == "2" || f[0] == "3") {
			slots++
		}
	}
	if slots != 4 || !strings.Contains(buf.String(), "total") {
		t.Errorf("found %d slot rows in\n%s", slots, buf.String())
	}
}

func TestPlotTimeTicksAreRoundAndFew(t *testing.T) {
	for _, span := range []time.Duration{40 * time.Second, 7 * time.Minute, 2*time.Hour + 6*time.Minute, 3 * 24 * time.Hour, 400 * 24 * time.Hour} {
		step := tickStep(span)
		if n := span / step; n > 6 || n < 1 {
			t.Errorf("span %v: step %v gives %d ticks, want 1 to 6", span, step, n)
		}
		if label := axisTime(step); strings.Contains(label, ".") {
			t.Errorf("span %v: step %v is labelled %q, want a round number", span, step, label)
		}
	}
}
