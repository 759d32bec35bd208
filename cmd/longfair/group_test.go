package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCLIAccountTree arranges accounts in groups with the CLI and reads
// the tree back as a table and as JSON; refusals are one line.
func TestCLIAccountTree(t *testing.T) {
	// Fresh names: the dev cluster outlives one run of the test (-count).
	sfx := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	a, org := "tree-a-"+sfx, "tree-org-"+sfx
	d := needDev(t)
	d.ok(t, "account", "create", a, "--weight", "1")
	if out := d.ok(t, "group", "set-weight", org+"/lab", "2"); !strings.Contains(out, "group "+org+"/lab: weight 2") {
		t.Fatalf("group set-weight printed %q", out)
	}
	if out := d.ok(t, "account", "set-group", a, org+"/lab"); !strings.Contains(out, "account "+a+" is in group "+org+"/lab") {
		t.Fatalf("account set-group printed %q", out)
	}
	list := d.ok(t, "group", "list")
	if !strings.Contains(list, org+"/lab") || !strings.Contains(list, a) {
		t.Fatalf("group list:\n%s", list)
	}
	out := d.ok(t, "fairness", "--tree")
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "account tree under policy") || !strings.HasPrefix(lines[1], "NODE") || !strings.HasPrefix(lines[2], "(cluster)") {
		t.Fatalf("fairness --tree:\n%s", out)
	}
	// tree-a is at depth 3, under tree-org and lab: indented twice.
	if !strings.Contains(out, "\n    "+a+" ") || !strings.Contains(out, "\n  lab ") {
		t.Fatalf("fairness --tree does not indent the tree:\n%s", out)
	}
	var tree struct {
		Policy string `json:"policy"`
		Nodes  []struct {
			Path      string  `json:"path"`
			IsAccount bool    `json:"is_account"`
			Weight    float64 `json:"weight"`
		} `json:"nodes"`
	}
	d.okJSON(t, &tree, "group", "tree")
	found := map[string]bool{}
	for _, n := range tree.Nodes {
		switch n.Path {
		case org + "/lab/" + a:
			found[n.Path] = n.IsAccount && n.Weight == 1
		case org + "/lab":
			found[n.Path] = !n.IsAccount && n.Weight == 2
		}
	}
	if !found[org+"/lab/"+a] || !found[org+"/lab"] {
		t.Fatalf("group tree --output json: %+v", tree)
	}

	_, stderr, code := d.run(t, "group", "remove", org+"/lab")
	if code != 1 {
		t.Fatalf("removing a group with an account exited %d", code)
	}
	oneLine(t, "group remove", stderr, a, "set-group")
	_, stderr, code = d.run(t, "account", "set-group", a)
	if code != 2 {
		t.Fatalf("set-group without a group exited %d", code)
	}
	oneLine(t, "set-group without a group", stderr, "--root")
	_, stderr, code = d.run(t, "group", "set-weight", org+"//x", "1")
	if code != 1 {
		t.Fatalf("a bad group path exited %d", code)
	}
	oneLine(t, "bad group path", stderr, "empty name")

	d.ok(t, "account", "set-group", a, "--root")
	d.ok(t, "group", "remove", org+"/lab")
	d.ok(t, "group", "remove", org)
}

// TestCLIPaperPolicySettings sets qknobler's ρ and FAWKES weighting with
// 'policy set' and reads them back; values out of range are refused with
// the range.
func TestCLIPaperPolicySettings(t *testing.T) {
	d := needDev(t)
	type settings struct {
		Policy string  `json:"policy"`
		Rho    float64 `json:"qknobler_rho"`
		Fawkes struct {
			Weighting string  `json:"weighting"`
			Guarantee float64 `json:"guarantee"`
			Threshold float64 `json:"threshold"`
		} `json:"fawkes"`
	}
	var before, after settings
	d.okJSON(t, &before, "policy", "show")
	d.ok(t, "policy", "set", "--qknobler-rho", "0.25", "--fawkes-weighting", "jd", "--fawkes-guarantee", "0.5")
	d.okJSON(t, &after, "policy", "show")
	if after.Rho != 0.25 || after.Fawkes.Weighting != "jd" || after.Fawkes.Guarantee != 0.5 || after.Fawkes.Threshold != 10 || after.Policy != before.Policy {
		t.Fatalf("settings after policy set: %+v (before %+v)", after, before)
	}
	table := d.ok(t, "policy", "show")
	if !strings.Contains(table, "qknobler_rho") || !strings.Contains(table, "weighting jd") {
		t.Fatalf("policy show:\n%s", table)
	}
	for _, c := range []struct {
		args  []string
		words []string
	}{
		{[]string{"--qknobler-rho", "2"}, []string{"qknobler_rho", "[0, 1]"}},
		{[]string{"--fawkes-weighting", "fifo"}, []string{"fifo", "td"}},
		{[]string{"--fawkes-disk", "ssd"}, []string{"ssd"}},
	} {
		_, stderr, code := d.run(t, append([]string{"policy", "set"}, c.args...)...)
		if code != 1 {
			t.Errorf("policy set %v exited %d", c.args, code)
		}
		oneLine(t, "policy set "+strings.Join(c.args, " "), stderr, c.words...)
	}
	d.ok(t, "policy", "set", "--qknobler-rho", "0.5", "--fawkes-weighting", "td", "--fawkes-guarantee", "0")
}

// TestCLILatencyQueues declares latency queues: admission control's class
// and reason are printed, a rejection exits 1 with its reason.
func TestCLILatencyQueues(t *testing.T) {
	// Fresh names: the dev cluster outlives one run of the test (-count).
	sfx := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	hard, late, heavy := "lq-hard-"+sfx, "lq-late-"+sfx, "lq-heavy-"+sfx
	d := needDev(t)
	// lq-hard outweighs every other account, so its fair share is about
	// the whole cluster: a 1-cpu burst for half of each period fits.
	d.ok(t, "account", "create", hard, "--weight", "1000000")
	d.ok(t, "account", "create", late, "--weight", "0")
	out := d.ok(t, "queue", "create", hard, "--period", "10m", "--deadline", "5m", "--burst", "cpu=1")
	if !strings.Contains(out, "latency queue of "+hard+" admitted as hard: safety, fairness") {
		t.Fatalf("queue create printed %q", out)
	}
	// An account a thousand times heavier shrinks lq-hard's fair share
	// below its guarantee: no more queues.
	d.ok(t, "account", "create", heavy, "--weight", "1000000000")
	_, stderr, code := d.run(t, "queue", "create", late, "--period", "1h", "--deadline", "1m", "--burst", "cpu=1")
	if code != 1 {
		t.Fatalf("a rejected queue exited %d", code)
	}
	oneLine(t, "rejected queue", stderr, "rejects", "safety condition", hard)
	_, stderr, code = d.run(t, "queue", "create", late, "--period", "1m", "--deadline", "5m", "--burst", "cpu=1")
	if code != 1 {
		t.Fatalf("a deadline past the period exited %d", code)
	}
	oneLine(t, "deadline past the period", stderr, "deadline", "period")
	_, stderr, code = d.run(t, "queue", "create", late, "--period", "1m")
	if code != 2 {
		t.Fatalf("queue create without --deadline and --burst exited %d", code)
	}
	oneLine(t, "missing flags", stderr, "--deadline", "--burst")

	var queues []struct {
		Account string `json:"account"`
		Class   string `json:"class"`
		Reason  string `json:"reason"`
	}
	d.okJSON(t, &queues, "queue", "list")
	if len(queues) != 1 || queues[0].Account != hard || queues[0].Class != "QUEUE_CLASS_HARD" || queues[0].Reason == "" {
		t.Fatalf("queue list: %+v", queues)
	}
	if list := d.ok(t, "queue", "list"); !strings.Contains(list, hard) || !strings.Contains(list, "hard") {
		t.Fatalf("queue list:\n%s", list)
	}
	// Leave the shared cluster as it was for the other tests.
	d.ok(t, "queue", "remove", hard)
	d.ok(t, "account", "set-weight", heavy, "0")
	d.ok(t, "account", "set-weight", hard, "0")
}
