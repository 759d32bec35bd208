package simulate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/internal/shareddata"
)

const simTable1 = `{"capacity":{"cpu":100,"mem":100},
"accounts":[{"name":"A","weight":1,"task":{"cpu":1,"mem":4}},{"name":"B","weight":1,"task":{"cpu":4,"mem":1}}],
"slots":[{"A":30,"B":4},{"A":20,"B":24},{"A":27,"B":8},{"A":10,"B":30}]}`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runSimTest(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runSim(args, &out, &errOut)
	return out.String(), err
}

func TestSimHelpShowsAnExample(t *testing.T) {
	out, err := runSimTest(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Example:", "longfair sim --macro --policy hmrf,ltdrf,ltaf,drf,static", "-window", "ONE node"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

func TestSimRefusesBadFlags(t *testing.T) {
	slotted := writeTemp(t, "t1.json", simTable1)
	cases := []struct {
		args []string
		says string
	}{
		{[]string{"--macro", "--policy", "hmrf,fifo"}, "valid policies are hmrf, ltdrf"},
		{[]string{"--macro", "--window", "tumbling:0s"}, "must be positive"},
		{[]string{"--macro", "--window", "decay:-2h"}, "must be positive"},
		{[]string{"--macro", "--window", "sliding"}, "length is missing"},
		{[]string{"--macro", "--timeout", "0"}, "positive duration"},
		{[]string{"--macro", "--timeout", "-5m"}, "positive duration"},
		{[]string{"--macro", "--quantum", "0s"}, "must be positive"},
		{[]string{"--macro", "--placement", "random"}, "valid placements"},
		{[]string{"--macro", "--format", "xml"}, "table, json or csv"},
		{[]string{"--policy", "hmrf"}, "exactly one input"},
		{[]string{"--macro", "--slotted", slotted}, "exactly one input"},
		{[]string{"--synthetic", "0"}, "positive number of tasks"},
		{[]string{"--macro", "extra"}, "unexpected argument"},
		{[]string{"--slotted", slotted, "--ltrf-resource", "gpu", "--policy", "ltrf"}, "cpu, mem"},
		{[]string{"--slotted", slotted, "--policy", "qknobler", "--qknobler-rho", "1.5"}, "in [0, 1]"},
	}
	for _, c := range cases {
		if _, err := runSimTest(t, c.args...); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: error %v, want one saying %q", c.args, err, c.says)
		}
	}
}

func TestSimLoaderErrorsExitNonZeroNamingFileAndLine(t *testing.T) {
	bad := writeTemp(t, "bad.json", "{\"capacity\":{\"cpu\":100},\n\"accounts\":[{\"name\":\"A\",\"task\":{\"gpu\":1}}],\"slots\":[]}")
	var out, errOut bytes.Buffer
	if code := cli.Dispatch(map[string]cli.Command{"sim": Command()}, []string{"sim", "--slotted", bad}, &out, &errOut); code == 0 {
		t.Fatal("exit code 0 for a bad input")
	}
	if msg := errOut.String(); !strings.Contains(msg, bad+":2: accounts[0].task.gpu") {
		t.Errorf("stderr %q does not name file, line and field", msg)
	}
}

func TestSimSlottedJSONRunsPoliciesSideBySide(t *testing.T) {
	out, err := runSimTest(t, "--slotted", writeTemp(t, "t1.json", simTable1), "--policy", "hmrf,drf", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Policy string
		Slots  []json.RawMessage
		Totals map[string]int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(got) != 2 || got[0].Policy != "hmrf" || got[1].Policy != "drf" || len(got[0].Slots) != 4 {
		t.Errorf("got %+v, want hmrf then drf with 4 slots each", got)
	}
}

func TestSimMacroTableComparesThePolicies(t *testing.T) {
	out, err := runSimTest(t, "--macro", "--policy", "hmrf,ltdrf,ltaf,drf,static")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"macro-benchmark", "User1", "User4", "speedup", "ltaf", "static"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSimSyntheticCSV(t *testing.T) {
	out, err := runSimTest(t, "--synthetic", "3000", "--accounts", "3", "--nodes", "4", "--format", "csv", "--policy", "hmrf,static")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*3 {
		t.Errorf("%d CSV rows, want a header and 3 accounts × 2 policies", len(rows))
	}
}

func TestSimSWFWithPlot(t *testing.T) {
	path := shareddata.Path(t, "HPC2N-2002-2.2-alea-subset.swf")
	plot := filepath.Join(t.TempDir(), "beta.svg")
	out, err := runSimTest(t, "--swf", path, "--top", "4", "--window", "decay:7d", "--policy", "hmrf,drf", "--plot", plot)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "others") || !strings.Contains(out, "window decay:1w") {
		t.Errorf("table lacks the folded account or the window:\n%s", out)
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("plot file: %v, starts %.20q", err, svg)
	}
}
