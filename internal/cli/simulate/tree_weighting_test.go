package simulate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSimDFFComparesHDRFAndDFF(t *testing.T) {
	out, err := runSimTest(t, "--dff", "--dff-pooled")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Account tree", "job4", "FR <cpu 42, mem 119, mic 10.5>", "MICs pooled", "H-DRF", "DFF", "total", "waited"} {
		if !strings.Contains(out, want) {
			t.Errorf("--dff output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimTreeArrangesAnyWorkload(t *testing.T) {
	tree := writeTemp(t, "tree.json", `{"groups": {"big": 3, "small": 1},
 "accounts": {"A": "big", "B": "small"}}`)
	slotted := writeTemp(t, "t1.json", simTable1)
	out, err := runSimTest(t, "--slotted", slotted, "--tree", tree, "--policy", "hdrf,dff", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		Policy string
		Totals map[string]int
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	// A's group weighs three times B's: A runs more tasks in all.
	for _, r := range runs {
		if r.Totals["A"] <= r.Totals["B"] {
			t.Errorf("%s: totals %v, want A (group weight 3) ahead of B (weight 1)", r.Policy, r.Totals)
		}
	}
	bad := writeTemp(t, "bad.json", `{"accounts": {"Z": "big"}}`)
	if _, err := runSimTest(t, "--slotted", slotted, "--tree", bad, "--policy", "dff"); err == nil || !strings.Contains(err.Error(), "accounts.Z") {
		t.Errorf("a tree naming an unknown account: error %v", err)
	}
}

func TestSimFawkesFlags(t *testing.T) {
	out, err := runSimTest(t, "--fawkes-bursty", "--fawkes-span", "20m", "--fawkes-weighting", "td,eq")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c-2 vs eq", "td", "eq", "Var(D)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--fawkes-bursty output lacks %q:\n%s", want, out)
		}
	}
	out, err = runSimTest(t, "--macro", "--policy", "fawkes,drf", "--fawkes-weighting", "jd", "--fawkes-guarantee", "0.5", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "discrimination_share_s") || !strings.Contains(out, "fawkes,User4") {
		t.Errorf("csv lacks the discrimination column or the fawkes rows:\n%s", out)
	}
	for _, args := range [][]string{
		{"--macro", "--policy", "fawkes", "--fawkes-guarantee", "2"},
		{"--macro", "--policy", "fawkes", "--fawkes-interval", "-1m"},
		{"--macro", "--policy", "fawkes", "--fawkes-base", "1"},
		{"--macro", "--policy", "fawkes", "--fawkes-disk", "gpu"},
		{"--macro", "--fawkes-weighting", "td,eq"},
		{"--macro", "--dff-pooled"},
		{"--dff", "--format", "json"},
	} {
		if _, err := runSimTest(t, args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
