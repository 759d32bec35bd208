package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// example3 is the paper's Example 3 (Table 1) as slotted input.
const example3 = `{
  "capacity": {"cpu": 100, "mem": 100},
  "accounts": [
    {"name": "A", "weight": 1, "task": {"cpu": 1, "mem": 4}},
    {"name": "B", "weight": 1, "task": {"cpu": 4, "mem": 1}}
  ],
  "slots": [
    {"A": 30, "B": 4},
    {"A": 20, "B": 24},
    {"A": 27, "B": 8},
    {"A": 10, "B": 30}
  ]
}`

func TestLoadSlottedBuildsOneMachineAndOneJobPerAccountAndSlot(t *testing.T) {
	w, err := LoadSlotted("ex3.json", strings.NewReader(example3))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.Resources, ","); got != "cpu,mem" {
		t.Errorf("resources %q, want cpu,mem in the file's order", got)
	}
	if len(w.Nodes) != 1 || !equalVectors(w.Nodes[0].Capacity, ledger.Vector{100, 100}) {
		t.Errorf("nodes %+v, want one machine of <100,100>", w.Nodes)
	}
	if w.Slot != time.Second || w.Horizon != ledger.Time(4*time.Second) {
		t.Errorf("slot %v horizon %v, want 1s and 4 slots", w.Slot, time.Duration(w.Horizon))
	}
	arrivals := [][2]int{{30, 4}, {20, 24}, {27, 8}, {10, 30}}
	if len(w.Jobs) != 8 {
		t.Fatalf("%d jobs, want 8", len(w.Jobs))
	}
	for _, j := range w.Jobs {
		slot := int(time.Duration(j.Submit) / time.Second)
		if j.Tasks != arrivals[slot][j.Account] {
			t.Errorf("slot %d account %d: %d tasks, want %d", slot, j.Account, j.Tasks, arrivals[slot][j.Account])
		}
		if j.Runtime != time.Second {
			t.Errorf("runtime %v, want one slot", j.Runtime)
		}
		want := ledger.Vector{1, 4}
		if j.Account == 1 {
			want = ledger.Vector{4, 1}
		}
		if !equalVectors(j.Demand, want) {
			t.Errorf("account %d demand %v, want %v", j.Account, j.Demand, want)
		}
	}
}

func TestLoadSlottedDefaultsWeightAndSkipsZeroCounts(t *testing.T) {
	in := `{"capacity":{"cpu":10},"accounts":[{"name":"A","task":{"cpu":1}}],"slots":[{"A":0},{}, {"A":3}]}`
	w, err := LoadSlotted("x.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if w.Accounts[0].Weight != 1 {
		t.Errorf("weight %v, want the default 1", w.Accounts[0].Weight)
	}
	if len(w.Jobs) != 1 || w.Jobs[0].Submit != ledger.Time(2*time.Second) {
		t.Errorf("jobs %+v, want one job in slot 2", w.Jobs)
	}
	if w.Horizon != ledger.Time(3*time.Second) {
		t.Errorf("horizon %v, want 3 slots", time.Duration(w.Horizon))
	}
}

func TestLoadSlottedErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		field    string
		says     string
	}{
		{"syntax", "{\n\"capacity\": {\"cpu\": 1,}\n}", 2, "", "invalid JSON"},
		{"unclosed", "{\n\"capacity\": {\"cpu\": 1}", 2, "", "ends early"},
		// Without a bound, a few million "[" overflow the parser's stack.
		{"nested too deep", strings.Repeat("[", maxJSONDepth+1), 1, "", "nest more than"},
		{"trailing data", `{"capacity":{"cpu":1},"accounts":[{"name":"A","task":{"cpu":1}}],"slots":[]}` + "\n{}", 2, "", "after the top-level"},
		{"not an object", "[1]", 1, "", "top level must be an object"},
		{"unknown top field", "{\n\"capacity\":{\"cpu\":1},\n\"nodes\":3}", 3, "nodes", "unknown field"},
		{"missing slots", `{"capacity":{"cpu":1},"accounts":[{"name":"A","task":{"cpu":1}}]}`, 1, "slots", "missing"},
		{"capacity kind", `{"capacity":[1],"accounts":[],"slots":[]}`, 1, "capacity", "must be an object"},
		{"accounts kind", "{\"capacity\":{\"cpu\":1},\n\"accounts\":{},\"slots\":[]}", 2, "accounts", "must be an array"},
		{"slots kind", "{\"capacity\":{\"cpu\":1},\"accounts\":[],\n\"slots\":3}", 2, "slots", "must be an array"},
		{"missing capacity", `{"accounts":[],"slots":[]}`, 1, "capacity", "missing"},
		{"number out of range", "{\"capacity\":{\n\"cpu\":1e999},\"accounts\":[],\"slots\":[]}", 2, "", "out of range"},
		{"weight kind", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\n\"weight\":\"big\",\"task\":{\"cpu\":1}}],\"slots\":[]}", 2, "accounts[0].weight", "must be a number"},
		{"capacity empty", `{"capacity":{},"accounts":[],"slots":[]}`, 1, "capacity", "is empty"},
		{"capacity string", "{\"capacity\":{\n\"cpu\":\"many\"},\"accounts\":[],\"slots\":[]}", 2, "capacity.cpu", "must be a number"},
		{"capacity zero", "{\"capacity\":{\n\"cpu\":0},\"accounts\":[],\"slots\":[]}", 2, "capacity.cpu", "must be positive"},
		{"capacity negative", "{\"capacity\":{\n\"cpu\":-2},\"accounts\":[],\"slots\":[]}", 2, "capacity.cpu", "non-negative"},
		{"duplicate key", "{\"capacity\":{\"cpu\":1,\n\"cpu\":2},\"accounts\":[],\"slots\":[]}", 2, "", "appears twice"},
		{"no accounts", `{"capacity":{"cpu":1},"accounts":[],"slots":[]}`, 1, "accounts", "is empty"},
		{"account kind", "{\"capacity\":{\"cpu\":1},\"accounts\":[\n7],\"slots\":[]}", 2, "accounts[0]", "must be an object"},
		{"account unknown field", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\n\"share\":3,\"task\":{\"cpu\":1}}],\"slots\":[]}", 2, "accounts[0].share", "unknown field"},
		{"account no name", "{\"capacity\":{\"cpu\":1},\"accounts\":[\n{\"task\":{\"cpu\":1}}],\"slots\":[]}", 2, "accounts[0].name", "missing"},
		{"account twice", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\"cpu\":1}},\n{\"name\":\"A\",\"task\":{\"cpu\":1}}],\"slots\":[]}", 2, "accounts[1].name", "listed twice"},
		{"weight negative", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\n\"weight\":-1,\"task\":{\"cpu\":1}}],\"slots\":[]}", 2, "accounts[0].weight", "non-negative"},
		{"task missing", "{\"capacity\":{\"cpu\":1},\"accounts\":[\n{\"name\":\"A\"}],\"slots\":[]}", 2, "accounts[0].task", "missing"},
		{"task unknown resource", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\n\"gpu\":1}}],\"slots\":[]}", 2, "accounts[0].task.gpu", "not in capacity"},
		{"task zero", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\n\"task\":{\"cpu\":0}}],\"slots\":[]}", 2, "accounts[0].task", "demands nothing"},
		{"slot kind", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\"cpu\":1}}],\"slots\":[\n3]}", 2, "slots[0]", "must be an object"},
		{"slot unknown account", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\"cpu\":1}}],\"slots\":[{\"A\":1},\n{\"C\":1}]}", 2, "slots[1].C", "not listed"},
		{"slot fraction", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\"cpu\":1}}],\"slots\":[\n{\"A\":1.5}]}", 2, "slots[0].A", "whole number"},
		{"slot negative", "{\"capacity\":{\"cpu\":1},\"accounts\":[{\"name\":\"A\",\"task\":{\"cpu\":1}}],\"slots\":[\n{\"A\":-1}]}", 2, "slots[0].A", "non-negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := LoadSlotted("in.json", strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("loaded %+v, want an error", w)
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an InputError", err)
			}
			if ie.File != "in.json" || ie.Line != c.line || ie.Field != c.field || !strings.Contains(ie.Msg, c.says) {
				t.Errorf("got file %q line %d field %q msg %q; want in.json line %d field %q saying %q",
					ie.File, ie.Line, ie.Field, ie.Msg, c.line, c.field, c.says)
			}
			prefix := "in.json:"
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("message %q does not start with %q", err, prefix)
			}
		})
	}
}
