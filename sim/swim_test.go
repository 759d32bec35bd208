package sim

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/shareddata"
	"github.com/longfair/longfair/ledger"
)

func TestLoadSWIMDerivesMapAndReduceStages(t *testing.T) {
	in := "job0\t23\t23\t410483\t0\t2513586060\n" + // tiny input, map only
		"job1\t100\t77\t1073741824\t2147483648\t1048576\n" + // 1 GiB in, 2 GiB shuffle, 1 MiB out
		"job2\t200\t100\t0\t0\t0\n" + // nothing at all
		"job3\t300\t100\t137438953472\t0\t0\n" // 128 GiB in: 1024 maps
	w, err := LoadSWIM("fb.tsv", strings.NewReader(in), SWIMOptions{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 3 || !equalVectors(w.Nodes[0].Capacity, ledger.Vector{4, 15}) {
		t.Errorf("nodes %v, want 3 of <4 cores, 15 GB>", w.Nodes)
	}
	type stage struct {
		id      uint64
		name    string
		account string
		tasks   int
		runtime time.Duration
		submit  ledger.Time
		after   int
	}
	want := []stage{
		{0, "map", "tiny", 1, time.Second, ledger.Time(23 * time.Second), -1},
		{1, "map", "small", 8, 16 * time.Second, ledger.Time(100 * time.Second), -1}, // 128 MiB at 8 MiB/s
		// Two reducers of (2 GiB + 1 MiB)/2 at 8 MiB/s: 1024.5 MiB / 8 = 128.0625 s.
		{1, "reduce", "small", 2, 128062500 * time.Microsecond, 0, 1},
		{2, "map", "tiny", 1, time.Second, ledger.Time(200 * time.Second), -1},
		{3, "map", "large", 1024, 16 * time.Second, ledger.Time(300 * time.Second), -1},
	}
	if len(w.Jobs) != len(want) {
		t.Fatalf("%d stages, want %d", len(w.Jobs), len(want))
	}
	for i, s := range want {
		j := w.Jobs[i]
		after := -1
		if j.After != nil {
			after = j.After.Job
			if !j.After.Continues || j.After.Delay != 0 {
				t.Errorf("stage %d dependency %+v, want a continuation without delay", i, *j.After)
			}
		}
		got := stage{j.ID, j.Name, w.Accounts[j.Account].Name, j.Tasks, j.Runtime, j.Submit, after}
		if j.After != nil {
			got.submit = 0
		}
		if got != s {
			t.Errorf("stage %d = %+v, want %+v", i, got, s)
		}
	}
}

func TestLoadSWIMErrors(t *testing.T) {
	cases := []struct {
		name, in, field, says string
		line                  int
	}{
		{"field count", "job0\t1\t1\t1\t1\t1\njob1\t2\t1\t1\t1", "", "has 5 tab-separated fields", 2},
		{"submit", "job0\tsoon\t1\t1\t1\t1", "field 2 (submit_time_seconds)", "not a non-negative number", 1},
		{"negative bytes", "job0\t1\t1\t1\t-5\t1", "field 5 (shuffle_bytes)", "not a non-negative byte count", 1},
		{"empty", "\n\n", "", "holds no jobs", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadSWIM("fb.tsv", strings.NewReader(c.in), SWIMOptions{})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			if ie.File != "fb.tsv" || ie.Line != c.line || ie.Field != c.field || !strings.Contains(ie.Msg, c.says) {
				t.Errorf("got %q; want line %d field %q saying %q", err, c.line, c.field, c.says)
			}
		})
	}
}

func TestLoadSWIMRefusesNegativeNodes(t *testing.T) {
	if _, err := LoadSWIM("fb.tsv", strings.NewReader("job0\t1\t1\t1\t1\t1"), SWIMOptions{Nodes: -2}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("error %v, want a refusal of -2 nodes", err)
	}
}

func TestLoadSWIMRealTrace(t *testing.T) {
	path := shareddata.Path(t, "FB-2009_samples_24_times_1hr_1.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, shuffles := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Split(sc.Text(), "\t"); len(fields) == 6 {
			lines++
			if fields[4] != "0" {
				shuffles++
			}
		}
	}
	f.Close()
	w, err := LoadSWIMFile(path, SWIMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	maps, reduces := 0, 0
	for _, j := range w.Jobs {
		if j.After == nil {
			maps++
		} else {
			reduces++
		}
	}
	if maps != lines || reduces != shuffles {
		t.Errorf("%d map and %d reduce stages; the trace has %d jobs, %d of them shuffling", maps, reduces, lines, shuffles)
	}
	if lines != 6638 {
		t.Errorf("%d jobs, PROVENANCE.md says 6638", lines)
	}
	if len(w.Nodes) != MacroNodes {
		t.Errorf("%d nodes, want the paper's %d by default", len(w.Nodes), MacroNodes)
	}
}
