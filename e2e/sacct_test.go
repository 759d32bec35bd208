package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/client"
)

// `longfair sacct --format JobID,State,ExitCode,Elapsed,AllocCPUS,ReqMem,
// MaxRSS,SU` on real jobs, read as a script reads it (--parsable2), agrees
// with the ledger's own export: each line's SU is the sum of the charges
// the journal holds for that job or element, and its state, exit code,
// cores and elapsed time are those of the attempt the cluster recorded.
func TestSacctAgreesWithTheLedgerExport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	start := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")
	base := []string{"--account", acct, "--user", user, "--walltime", "1m"}
	ok := c.cliSubmit(ctx, append(base, "--cpu", "2", "--mem", "1G", "--", "sleep 1")...)
	bad := c.cliSubmit(ctx, append(base, "--cpu", "1", "--", "exit 3")...)
	array := c.cliSubmit(ctx, append(base, "--cpu", "1", "--array", "3", "--", "true")...)
	c.waitEnded(ctx, ok, bad, array)

	out := c.cli(ctx, "sacct", "-S", start, "-P", "--format", "JobID,State,ExitCode,Elapsed,AllocCPUS,ReqMem,MaxRSS,SU")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "JobID|State|ExitCode|Elapsed|AllocCPUS|ReqMem|MaxRSS|SU" {
		t.Fatalf("sacct -P header: %q", lines[0])
	}
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != 8 {
			t.Fatalf("sacct -P line %q has %d fields, want 8", l, len(f))
		}
		rows[f[0]] = f
	}

	exportFile := filepath.Join(t.TempDir(), "journal.csv")
	c.cli(ctx, "ledger", "export", "--format", "csv", "--out", exportFile)
	charges := exportedCharges(t, exportFile)

	want := map[string]struct {
		job            uint64
		task           int64
		state, exit    string
		cpus, mem, min string
	}{
		fmt.Sprint(ok):             {ok, 0, "COMPLETED", "0:0", "2", "1G", "00:00:01"},
		fmt.Sprint(bad):            {bad, 0, "FAILED", "3:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_0", array): {array, 0, "COMPLETED", "0:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_1", array): {array, 1, "COMPLETED", "0:0", "1", "0", "00:00:00"},
		fmt.Sprintf("%d_2", array): {array, 2, "COMPLETED", "0:0", "1", "0", "00:00:00"},
	}
	if len(rows) != len(want) {
		t.Errorf("sacct listed %d lines, want %d:\n%s", len(rows), len(want), out)
	}
	// The PI's report by day adds up to the same charges.
	report := c.cli(ctx, "usage", "report", "--from", start, "--per", "day", "--account", acct, "--output", "csv")
	recs, err := csv.NewReader(strings.NewReader(report)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "PERIOD" {
		t.Fatalf("usage report --per day: %v\n%s", err, report)
	}
	var reported, exported int64
	for _, r := range recs[1:] {
		su, err := client.ParseSU(r[slices.Index(recs[0], "CHARGED_SU")])
		if err != nil {
			t.Fatal(err)
		}
		reported += su
	}
	for _, su := range charges {
		exported += su
	}
	if reported != exported {
		t.Errorf("usage report --per day charges %s SU, the ledger export %s", client.FormatSU(reported), client.FormatSU(exported))
	}
	for id, w := range want {
		r, found := rows[id]
		if !found {
			t.Errorf("sacct has no line %s:\n%s", id, out)
			continue
		}
		if r[1] != w.state || r[2] != w.exit || r[4] != w.cpus || r[5] != w.mem {
			t.Errorf("line %s: %v; want state %s, exit %s, %s cores, mem %s", id, r, w.state, w.exit, w.cpus, w.mem)
		}
		if r[3] < w.min {
			t.Errorf("line %s elapsed %s, want at least %s", id, r[3], w.min)
		}
		if r[6] != "" {
			t.Errorf("line %s MaxRSS %q on an unconfined worker, which measures nothing", id, r[6])
		}
		su, err := client.ParseSU(r[7])
		if err != nil {
			t.Fatalf("line %s SU %q: %v", id, r[7], err)
		}
		if got := charges[fmt.Sprintf("job-%d.task-%d.", w.job, w.task)]; su != got || su <= 0 {
			t.Errorf("line %s: sacct says %s SU, the ledger export charges %s", id, client.FormatSU(su), client.FormatSU(got))
		}
	}
}

// exportedCharges sums a CSV ledger export's charges by task ("job-J.task-T.").
func exportedCharges(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("ledger export: %d records, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	out := map[string]int64{}
	for _, r := range recs[1:] {
		if r[col["KIND"]] != "charge" {
			continue
		}
		id := r[col["ID"]]
		task := id[:strings.Index(id, ".attempt-")+1]
		su, err := client.ParseSU(r[col["AMOUNT_SU"]])
		if err != nil {
			t.Fatalf("export charge %s amount %q: %v", id, r[col["AMOUNT_SU"]], err)
		}
		out[task] += su
	}
	return out
}

// `longfair squeue` on a real worker: a running job shows its node, a
// held job, one waiting for a dependency and an array's elements still
// to run show why they wait, as the scheduler says; --states filters.
func TestSqueueShowsWhyJobsWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	ready := filepath.Join(t.TempDir(), "ready")
	base := []string{"--account", acct, "--user", user, "--walltime", "1m"}
	// w1 has 4 cores: the runner takes them all, so the array waits.
	runner := c.cliSubmit(ctx, append(base, "--cpu", "4", "--", "touch "+ready+"; sleep 300")...)
	waitFile(ctx, t, ready)
	held := c.cliSubmit(ctx, append(base, "--cpu", "1", "--hold", "--", "true")...)
	dep := c.cliSubmit(ctx, append(base, "--cpu", "1", "--dependency", fmt.Sprintf("afterok:%d", runner), "--", "true")...)
	array := c.cliSubmit(ctx, append(base, "--cpu", "1", "--array", "3", "--", "true")...)

	out := c.cli(ctx, "squeue", "-o", "%i|%t|%D|%R")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "JOBID|ST|NODES|NODELIST(REASON)" {
		t.Fatalf("squeue header %q", lines[0])
	}
	want := []string{
		fmt.Sprintf("%d|R|1|w1", runner),
		fmt.Sprintf("%d|PD|1|(JobHeldUser)", held),
		fmt.Sprintf("%d|PD|1|(Dependency)", dep),
		fmt.Sprintf("%d_[0-2]|PD|1|(Resources)", array),
	}
	if strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("squeue printed:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
	if out := c.cli(ctx, "squeue", "-h", "-t", "R", "-o", "%i"); strings.TrimSpace(out) != fmt.Sprint(runner) {
		t.Errorf("squeue -t R printed %q, want the running job alone", out)
	}
	if code, out := c.cliFails(ctx, "squeue", "-t", "CD"); code != 2 || !strings.Contains(out, "sacct") {
		t.Errorf("squeue -t CD: exit %d:\n%s", code, out)
	}
	c.cli(ctx, "cancel", fmt.Sprint(runner), fmt.Sprint(held), fmt.Sprint(dep), fmt.Sprint(array))
}
