package main

import (
	"strings"
	"testing"
)

// Issue 10 item 1 as a user meets it on a dev cluster: the reported
// `submit --cpu 0.000001 --array 40` is refused on one line naming the
// field and its unit, holding nothing; `--mem 1G` alone is charged; and
// `policy show` says how tasks are billed.
func TestCLIFreeComputeIsClosed(t *testing.T) {
	d := needDev(t)
	var before struct {
		Held num `json:"held_micro_su"`
	}
	d.okJSON(t, &before, "balance", "bio")
	_, errOut, code := d.run(t, "submit", "--account", "bio", "--user", "bob", "--cpu", "0.000001", "--array", "40", "--walltime", "1m", "--", "sleep 6")
	if code == 0 {
		t.Fatal("40 tasks of 0.000001 core were submitted")
	}
	oneLine(t, "tiny cpu submit", errOut, "demand[cpu]", "0.01 core")
	var after struct {
		Held num `json:"held_micro_su"`
	}
	d.okJSON(t, &after, "balance", "bio")
	if after.Held > before.Held {
		t.Fatalf("a refused submission left a hold: held %d, was %d", after.Held, before.Held)
	}

	id := submittedID(t, d.ok(t, "submit", "--account", "bio", "--user", "bob", "--mem", "1G", "--walltime", "1m", "--wait", "--interval", "100ms", "--", "sleep 0.3"))
	var shown struct {
		Job jsonJob `json:"job"`
	}
	d.okJSON(t, &shown, "job", "show", id)
	if shown.Job.Charged <= 0 || shown.Job.Demand["mem"] != 1<<30 {
		t.Fatalf("a 1G memory-only task: demand %v, charged %d micro-SU; want it charged", shown.Job.Demand, shown.Job.Charged)
	}

	var settings struct {
		Rule    string             `json:"billing_rule"`
		Weights map[string]float64 `json:"billing_weights"`
	}
	d.okJSON(t, &settings, "policy", "show")
	if settings.Rule != "max" || settings.Weights["mem"] <= 0 {
		t.Fatalf("policy show: rule %q, weights %v; want max with memory priced", settings.Rule, settings.Weights)
	}
	if out := d.ok(t, "policy", "show"); !strings.Contains(out, "billing_rule") || !strings.Contains(out, "max") {
		t.Fatalf("policy show does not show the billing rule:\n%s", out)
	}
}
