package simulate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimBPFInputs(t *testing.T) {
	// A small BPF setting: the per-queue report names bpf's admission
	// decision and every policy's completions.
	out, err := runSimTest(t, "--bpf", "2", "--nodes", "4", "--bursts", "2", "--policy", "drf,sp,bpf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bpf admission", "LQ ", "hard", "drf completion", "sp completion", "bpf completion", "LQ: hard: safety"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	out, err = runSimTest(t, "--bpf", "1,2", "--nodes", "4", "--bursts", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "drf/bpf") || strings.Count(out, "hard") != 2 {
		t.Errorf("the comparison over throughput queues lacks its rows:\n%s", out)
	}
	out, err = runSimTest(t, "--bpf-queues", "--nodes", "4", "--bursts", "2", "--policy", "bpf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LQ-0   hard", "LQ-1   soft", "LQ-2   elastic"} {
		if !strings.Contains(out, want) {
			t.Errorf("§5.2.5's admission %q is missing:\n%s", want, out)
		}
	}
}

func TestSimQKnoblerSweep(t *testing.T) {
	out, err := runSimTest(t, "--synthetic", "2000", "--nodes", "8", "--accounts", "4", "--qknobler-sweep", "0,0.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"θ bound", "qknobler  0.00", "qknobler  0.50", "qknobler  1.00", "started every task when and where drf did: yes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sweep lacks %q:\n%s", want, out)
		}
	}
}

func TestSimGoogleInput(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "part.csv")
	events := "1000000,,7,0,,0,alice,0,0,0.1,0.1,0,0\n2000000,,7,0,11,1,alice,0,0,0.1,0.1,0,0\n9000000,,7,0,11,4,alice,0,0,0.1,0.1,0,0\n"
	if err := os.WriteFile(trace, []byte(events), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runSimTest(t, "--google", trace, "--nodes", "2", "--policy", "qknobler,drf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "user01") || !strings.Contains(out, "qknobler") {
		t.Errorf("the report lacks the trace's user or the policy:\n%s", out)
	}
}

func TestSimRefusesBadPaperFlags(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{[]string{"--bpf", "0"}, "positive numbers"},
		{[]string{"--bpf", "two"}, "comma-separated list"},
		{[]string{"--bpf", "1,2", "--lq-scale", "1,2"}, "one of --bpf and --lq-scale"},
		{[]string{"--bpf", "1,2", "--policy", "bpf"}, "leave out --policy"},
		{[]string{"--bpf", "2", "--bursts", "0"}, "positive number of bursts"},
		{[]string{"--macro", "--qknobler-sweep", "0,1.5"}, "in [0, 1]"},
		{[]string{"--macro", "--qknobler-sweep", "0.5", "--policy", "drf"}, "leave out --policy"},
		{[]string{"--macro", "--qknobler-sweep", "0.5", "--format", "json"}, "table"},
		{[]string{"--macro", "--bpf", "2"}, "exactly one input"},
		{[]string{"--google", filepath.Join(t.TempDir(), "absent.csv")}, "--google"},
	}
	for _, c := range cases {
		if _, err := runSimTest(t, c.args...); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: got %v, want an error saying %q", c.args, err, c.says)
		}
	}
}
