package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/worker"
)

// The CLI tests drive the built binary against one 'longfair dev' cluster:
// three server and three worker processes on loopback. The binary is built
// and the cluster started on first use, and TestMain stops the cluster and
// checks that no process of it is left.

// devCluster shared by the tests of this package that need it.
var sharedDev struct {
	once sync.Once
	dev  *cliDev
	err  error
}

func TestMain(m *testing.M) {
	worker.Supervise() // tests run worker agents in this process
	code := m.Run()
	if d := sharedDev.dev; d != nil {
		if err := d.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "longfair dev did not stop cleanly:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// cliDev is the running 'longfair dev' and the binary that runs it.
type cliDev struct {
	*testcluster.Dev
	root, bin string
	info      struct {
		PID     int  `json:"pid"`
		ACL     bool `json:"acl"`
		Servers []struct {
			ID    string            `json:"id"`
			PID   int               `json:"pid"`
			Addrs map[string]string `json:"addresses"`
		} `json:"servers"`
		Workers []struct {
			ID    string            `json:"id"`
			PID   int               `json:"pid"`
			Addrs map[string]string `json:"addresses"`
		} `json:"workers"`
	}
}

// needDev returns the shared cluster, starting it on first use.
func needDev(t *testing.T) *cliDev {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs a 3-server, 3-worker dev cluster")
	}
	sharedDev.once.Do(func() { sharedDev.dev, sharedDev.err = startCLIDev() })
	if sharedDev.err != nil {
		t.Fatalf("start longfair dev: %v", sharedDev.err)
	}
	return sharedDev.dev
}

func startCLIDev() (*cliDev, error) {
	root, err := os.MkdirTemp("", "longfair-cli-test-")
	if err != nil {
		return nil, err
	}
	d := &cliDev{root: root, bin: filepath.Join(root, "longfair")}
	if _, err := testcluster.Build(root); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	if d.Dev, err = testcluster.StartDev(d.bin, filepath.Join(root, "cluster"), filepath.Join(root, "dev.out"), "--start-timeout", "90s"); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.Dir, "dev.json"))
	if err != nil {
		d.stop()
		return nil, err
	}
	if err := json.Unmarshal(data, &d.info); err != nil {
		d.stop()
		return nil, fmt.Errorf("dev.json: %v", err)
	}
	return d, nil
}

// stop interrupts dev as Ctrl-C would, and checks that it and every
// process it started are gone.
func (d *cliDev) stop() error {
	defer os.RemoveAll(d.root)
	var errs []error
	if err := d.Interrupt(90 * time.Second); err != nil {
		errs = append(errs, err)
	}
	var pids []int
	for _, s := range d.info.Servers {
		pids = append(pids, s.PID)
	}
	for _, w := range d.info.Workers {
		pids = append(pids, w.PID)
	}
	for _, pid := range pids {
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			errs = append(errs, fmt.Errorf("process %d of the dev cluster is still running after dev exited", pid))
		}
	}
	if _, err := os.Stat(filepath.Join(d.Dir, "dev.env")); err == nil {
		errs = append(errs, errors.New("dev.env is still there after the cluster stopped"))
	}
	if len(errs) > 0 {
		errs = append(errs, fmt.Errorf("dev output:\n%s", d.Output()))
	}
	return errors.Join(errs...)
}

// run runs the CLI against the cluster and returns what it printed and
// its exit code.
func (d *cliDev) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return d.runEnv(t, nil, args...)
}

// runEnv is run with extra environment variables (which win over dev.env).
func (d *cliDev) runEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Env = append(append(testcluster.CleanEnv(), d.Env...), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("longfair %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("longfair %s did not finish within 90s", strings.Join(args, " "))
	}
	return out.String(), errOut.String(), code
}

// ok runs the CLI and fails the test unless it exits 0.
func (d *cliDev) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := d.run(t, args...)
	if code != 0 {
		t.Fatalf("longfair %s exited %d:\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// okJSON runs the CLI with --output json and decodes its output into v.
func (d *cliDev) okJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	withOutput := append([]string(nil), args...)
	for i, a := range args {
		if a == "--" {
			withOutput = append(append(append([]string(nil), args[:i]...), "--output", "json"), args[i:]...)
			break
		}
	}
	if len(withOutput) == len(args) {
		withOutput = append(withOutput, "--output", "json")
	}
	out := d.ok(t, withOutput...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("longfair %s --output json printed what is not JSON (%v):\n%s", strings.Join(args, " "), err, out)
	}
}

// num reads a 64-bit integer field, which the API's JSON writes as a string.
type num int64

func (n *num) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*n = num(v)
	return err
}

type jsonJob struct {
	ID        num                `json:"id"`
	Account   string             `json:"account"`
	State     string             `json:"state"`
	Tasks     num                `json:"tasks"`
	Pending   num                `json:"pending_tasks"`
	Running   num                `json:"running_tasks"`
	Succeeded num                `json:"succeeded_tasks"`
	Cancelled num                `json:"cancelled_tasks"`
	Charged   num                `json:"charged_micro_su"`
	Demand    map[string]float64 `json:"demand"`
}

var submittedRE = regexp.MustCompile(`submitted job (\d+):`)

func submittedID(t *testing.T, out string) string {
	t.Helper()
	m := submittedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("submit printed no job id: %q", out)
	}
	return m[1]
}

// oneLine checks that an error went out as one line on stderr.
func oneLine(t *testing.T, what, stderr string, words ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("%s: stderr %q is not one line", what, stderr)
	}
	for _, w := range words {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q does not mention %q", what, stderr, w)
		}
	}
}

func TestCLISubmitWatchCancel(t *testing.T) {
	d := needDev(t)

	t.Run("table", func(t *testing.T) {
		id := submittedID(t, d.ok(t, "submit", "--array", "3", "--cpu", "1", "--walltime", "1m", "--", "true"))
		out := d.ok(t, "job", "watch", id, "--interval", "100ms", "--max-wait", "60s")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "job "+id+" succeeded") || !strings.Contains(last, "3 succeeded") {
			t.Fatalf("watch ended with %q, want job %s succeeded with 3 tasks", last, id)
		}

		// A job bigger than the cluster: cancel it while it runs.
		id = submittedID(t, d.ok(t, "submit", "--array", "40", "--cpu", "1", "--walltime", "2m", "--", "sleep 60"))
		out = d.ok(t, "cancel", id)
		if !strings.Contains(out, "job "+id+" cancelled") && !strings.Contains(out, "job "+id+" is cancelled") {
			t.Fatalf("cancel printed %q", out)
		}
		out, errOut, code := d.run(t, "job", "watch", id, "--interval", "100ms", "--max-wait", "60s")
		if code != 1 || !strings.Contains(out, "cancelled") {
			t.Fatalf("watch of a cancelled job exited %d:\n%s%s", code, out, errOut)
		}
		oneLine(t, "watch of a cancelled job", errOut, "ended cancelled")
	})

	t.Run("repeat and logs", func(t *testing.T) {
		out, errOut, code := d.run(t, "submit", "--repeat", "3", "--wait=false", "--output", "json", "--", "echo hello-$LONGFAIR_TASK_INDEX-of-$LONGFAIR_JOB_ID")
		if code != 0 {
			t.Fatalf("submit --repeat: %s", errOut)
		}
		var jobs []jsonJob
		if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 3 {
			t.Fatalf("submit --repeat 3 --output json printed %d jobs (%v):\n%s", len(jobs), err, out)
		}
		if !strings.Contains(errOut, "submitting: 3 of 3 jobs (100%)") {
			t.Errorf("submit --repeat showed no progress: %q", errOut)
		}
		for _, j := range jobs {
			id := fmt.Sprint(j.ID)
			d.ok(t, "job", "watch", id, "--interval", "100ms", "--max-wait", "60s")
			if got := d.ok(t, "logs", id+".0"); got != "hello-0-of-"+id+"\n" {
				t.Errorf("logs %s.0 printed %q", id, got)
			}
		}
		_, errOut, code = d.run(t, "logs", fmt.Sprint(jobs[0].ID)+".5")
		if code != 2 {
			t.Errorf("logs of a task index the job does not have exited %d", code)
		}
		oneLine(t, "logs of a missing task", errOut, "no task 5")
	})

	t.Run("json", func(t *testing.T) {
		var job jsonJob
		d.okJSON(t, &job, "submit", "--account", "bio", "--user", "bob", "--array", "40", "--cpu", "1", "--walltime", "2m", "--", "sleep", "60")
		if job.ID == 0 || job.Account != "bio" || job.Tasks != 40 || job.Demand["cpu"] != 1 {
			t.Fatalf("submit --output json returned %+v", job)
		}
		id := fmt.Sprint(job.ID)
		// Watch in the background while the job is cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		watch := exec.CommandContext(ctx, d.bin, "job", "watch", id, "--interval", "100ms", "--output", "json")
		watch.Env = append(testcluster.CleanEnv(), d.Env...)
		stdout, err := watch.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var watchErr strings.Builder
		watch.Stderr = &watchErr
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		var seen []jsonJob
		scanned := make(chan error, 1)
		first := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var j jsonJob
				if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
					scanned <- fmt.Errorf("watch line %q: %v", sc.Text(), err)
					return
				}
				seen = append(seen, j)
				if len(seen) == 1 {
					close(first)
				}
			}
			scanned <- sc.Err()
		}()
		select {
		case <-first:
		case <-ctx.Done():
			t.Fatal("watch printed nothing")
		}
		var cancelled jsonJob
		d.okJSON(t, &cancelled, "cancel", id)
		if cancelled.ID != job.ID || cancelled.Cancelled == 0 || cancelled.Pending != 0 {
			t.Fatalf("cancel --output json returned %+v: want the job with its pending tasks cancelled", cancelled)
		}
		if err := <-scanned; err != nil {
			t.Fatal(err)
		}
		err = watch.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("watch of a cancelled job ended with %v, want exit status 1", err)
		}
		last := seen[len(seen)-1]
		if last.State != "JOB_STATE_CANCELLED" || last.Cancelled+last.Succeeded != 40 || last.Running != 0 {
			t.Fatalf("watch's last line %+v: want the job cancelled with nothing running", last)
		}
		oneLine(t, "json watch of a cancelled job", watchErr.String(), "ended cancelled")
	})
}

type jsonFairness struct {
	Policy   string `json:"policy"`
	Accounts []struct {
		Account string             `json:"account"`
		Weight  float64            `json:"weight"`
		Usage   map[string]float64 `json:"usage"`
		HasBeta bool               `json:"has_beta"`
		Pending num                `json:"pending_tasks"`
		Running num                `json:"running_tasks"`
	} `json:"accounts"`
}

func TestCLIFairness(t *testing.T) {
	d := needDev(t)
	d.ok(t, "submit", "--account", "bio", "--user", "bob", "--array", "2", "--wait", "--interval", "100ms", "--", "sleep 0.2")

	t.Run("json", func(t *testing.T) {
		var r jsonFairness
		d.okJSON(t, &r, "fairness")
		var settings struct {
			Policy string `json:"policy"`
		}
		d.okJSON(t, &settings, "policy", "show")
		if r.Policy != settings.Policy {
			t.Errorf("fairness says policy %q, the settings %q", r.Policy, settings.Policy)
		}
		var accounts []struct {
			Name   string  `json:"name"`
			Weight float64 `json:"weight"`
		}
		d.okJSON(t, &accounts, "account", "list")
		weights := map[string]float64{}
		for _, a := range accounts {
			weights[a.Name] = a.Weight
		}
		rows := map[string]bool{}
		for _, a := range r.Accounts {
			rows[a.Account] = true
			if w, ok := weights[a.Account]; !ok || w != a.Weight {
				t.Errorf("fairness weight of %s is %v, account list says %v", a.Account, a.Weight, w)
			}
			if a.Account == "bio" && a.Usage["cpu"] <= 0 {
				t.Errorf("bio ran tasks but its accumulated cpu usage is %v", a.Usage["cpu"])
			}
		}
		if !rows["astro"] || !rows["bio"] {
			t.Fatalf("fairness rows %v: want the demo accounts astro and bio", rows)
		}
	})

	t.Run("table", func(t *testing.T) {
		out := d.ok(t, "fairness")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if !strings.HasPrefix(lines[0], "policy ") || !strings.HasPrefix(lines[1], "ACCOUNT") || !strings.Contains(lines[1], "BETA") {
			t.Fatalf("fairness table:\n%s", out)
		}
		found := 0
		for _, l := range lines[2:] {
			if f := strings.Fields(l); len(f) > 0 && (f[0] == "astro" || f[0] == "bio") {
				found++
				if !strings.HasSuffix(f[2], "%") {
					t.Errorf("share column of %q is not a percentage", l)
				}
			}
		}
		if found != 2 {
			t.Fatalf("fairness table has %d rows for astro and bio:\n%s", found, out)
		}
		records, err := csv.NewReader(strings.NewReader(d.ok(t, "fairness", "--output", "csv"))).ReadAll()
		if err != nil || len(records) < 3 || strings.Join(records[0], " ") != strings.Join(strings.Fields(lines[1]), " ") {
			t.Fatalf("fairness csv %q (%v) does not match the table header %q", records, err, lines[1])
		}
	})
}

// TestCLILedgerAndUsage runs a job for a fresh account and checks the
// ledger and the usage report against the job's own task records.
func TestCLILedgerAndUsage(t *testing.T) {
	d := needDev(t)
	// Fresh names, so that the test can run again on the same cluster.
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	acct, user := "usage-"+suffix, "uma-"+suffix
	d.ok(t, "account", "create", acct, "--contribution", "1")
	d.ok(t, "user", "create", user, "--account", acct)
	d.ok(t, "grant", "add", acct, "1000", "--id", acct+"-1", "--note", "cli test")
	id := submittedID(t, d.ok(t, "submit", "--account", acct, "--user", user, "--array", "2", "--cpu", "2",
		"--walltime", "1m", "--wait", "--interval", "100ms", "--", "sleep 0.5"))

	var shown struct {
		Job   jsonJob `json:"job"`
		Tasks []struct {
			Runtime string `json:"runtime"`
			Charged num    `json:"charged_micro_su"`
		} `json:"tasks"`
	}
	d.okJSON(t, &shown, "job", "show", id)
	if len(shown.Tasks) != 2 || shown.Job.Succeeded != 2 {
		t.Fatalf("job show: %+v", shown)
	}
	var cpuSeconds float64
	var charged num
	for _, task := range shown.Tasks {
		rt, err := time.ParseDuration(task.Runtime)
		if err != nil {
			t.Fatalf("task runtime %q: %v", task.Runtime, err)
		}
		cpuSeconds += 2 * rt.Seconds()
		charged += task.Charged
	}
	if charged <= 0 || charged != shown.Job.Charged {
		t.Fatalf("tasks charged %d in all, the job says %d", charged, shown.Job.Charged)
	}

	t.Run("ledger verify", func(t *testing.T) {
		out := d.ok(t, "ledger", "verify")
		if !strings.HasPrefix(out, "ok: ") {
			t.Fatalf("ledger verify printed %q", out)
		}
		var v struct {
			OK      bool `json:"ok"`
			Entries num  `json:"entries"`
		}
		d.okJSON(t, &v, "ledger", "verify")
		var entries []struct {
			Seq num `json:"seq"`
		}
		d.okJSON(t, &entries, "ledger", "show", "--limit", "0")
		if !v.OK || int(v.Entries) < len(entries) || len(entries) == 0 {
			t.Fatalf("ledger verify %+v, and ledger show lists %d entries", v, len(entries))
		}
		var mine []struct {
			Kind   string `json:"kind"`
			Amount num    `json:"amount_micro_su"`
		}
		d.okJSON(t, &mine, "ledger", "show", "--account", acct, "--limit", "0")
		kinds := map[string]num{}
		for _, e := range mine {
			kinds[e.Kind] += e.Amount
		}
		if kinds["grant"] != 1000*1_000_000 || kinds["charge"] != charged {
			t.Fatalf("%s's journal sums %v: want the grant of 1000 SU and charges of %d micro-SU", acct, kinds, charged)
		}
		export := filepath.Join(t.TempDir(), "journal.jsonl")
		_, errOut, code := d.run(t, "ledger", "export", "--out", export)
		if code != 0 {
			t.Fatalf("ledger export: %s", errOut)
		}
		data, err := os.ReadFile(export)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n < len(entries) || !strings.Contains(errOut, "exporting the journal") {
			t.Fatalf("export wrote %d lines for %d entries; progress: %q", n, len(entries), errOut)
		}
	})

	t.Run("usage report", func(t *testing.T) {
		var r struct {
			Rows []struct {
				Key     string             `json:"key"`
				Tasks   num                `json:"tasks"`
				Usage   map[string]float64 `json:"usage"`
				Charged num                `json:"charged_micro_su"`
			} `json:"rows"`
		}
		d.okJSON(t, &r, "usage", "report", "--from", "-1h", "--account", acct)
		if len(r.Rows) != 1 || r.Rows[0].Key != acct || r.Rows[0].Tasks != 2 || r.Rows[0].Charged != charged {
			t.Fatalf("usage report %+v: want one row for %s with 2 tasks charged %d", r.Rows, acct, charged)
		}
		// The cluster counts usage between the start and end events it
		// committed, the worker measures runtime around the process: the
		// two agree to a fraction of a second per task.
		if got := r.Rows[0].Usage["cpu"]; got < cpuSeconds-1 || got > cpuSeconds+1 {
			t.Errorf("usage report has %v cpu-seconds; the tasks ran %v cpu-seconds", got, cpuSeconds)
		}
		out := d.ok(t, "usage", "report", "--from", "-1h", "--by", "user")
		if !regexp.MustCompile(`(?m)^`+user+`\s+2\s`).MatchString(out) || !strings.Contains(out, "CHARGED_SU") {
			t.Fatalf("usage report by user:\n%s", out)
		}
	})
}

func TestCLIStatusNodesExplain(t *testing.T) {
	d := needDev(t)
	if len(d.info.Servers) != 3 || len(d.info.Workers) != 3 {
		t.Fatalf("dev.json lists %d servers and %d workers", len(d.info.Servers), len(d.info.Workers))
	}
	out := d.ok(t, "status")
	if !strings.Contains(out, "leader: s") || !strings.Contains(out, "raft: healthy: 3 of 3 voters") || !strings.Contains(out, "3 of 3 up") {
		t.Fatalf("status:\n%s", out)
	}
	var st struct {
		Servers []struct {
			Reachable bool `json:"reachable"`
		} `json:"servers"`
		Workers []struct {
			ID       string             `json:"id"`
			Up       bool               `json:"up"`
			Capacity map[string]float64 `json:"capacity"`
		} `json:"workers"`
	}
	d.okJSON(t, &st, "status")
	mic := 0.0
	for _, w := range st.Workers {
		mic += w.Capacity["mic"]
	}
	if len(st.Servers) != 3 || len(st.Workers) != 3 || mic != 2 {
		t.Fatalf("status json: %+v", st)
	}
	records, err := csv.NewReader(strings.NewReader(d.ok(t, "nodes", "--output", "csv"))).ReadAll()
	if err != nil || len(records) != 4 {
		t.Fatalf("nodes csv: %q, %v", records, err)
	}

	// A task no node can hold is refused at submission, holding nothing.
	_, errOut, code := d.run(t, "submit", "--account", "bio", "--user", "bob", "--cpu", "64", "--", "true")
	if code != 1 {
		t.Fatalf("submit --cpu 64 on 4-cpu nodes exited %d", code)
	}
	oneLine(t, "submit of a task no node can hold", errOut, "no known node has cpu=64", "largest known node has cpu=4 mem=8G mic=2")

	// More tasks than the cluster runs at once: some wait for resources.
	id := submittedID(t, d.ok(t, "submit", "--account", "bio", "--user", "bob", "--array", "40", "--cpu", "1", "--walltime", "2m", "--", "sleep 60"))
	defer d.ok(t, "cancel", id)
	out = d.ok(t, "explain", id)
	if !strings.Contains(out, "resources") || !strings.Contains(out, "ranks") {
		t.Fatalf("explain of a job with waiting tasks:\n%s", out)
	}
	var e struct {
		Explanation struct {
			Account string `json:"account"`
			Policy  string `json:"policy"`
			Reasons []struct {
				Kind string `json:"kind"`
			} `json:"reasons"`
		} `json:"explanation"`
	}
	d.okJSON(t, &e, "explain", id)
	kinds := map[string]bool{}
	for _, r := range e.Explanation.Reasons {
		kinds[r.Kind] = true
	}
	if e.Explanation.Account != "bio" || !kinds["resources"] || !kinds["rank"] || !kinds["service units"] {
		t.Fatalf("explain json: %+v", e)
	}

	_, errOut, code = d.run(t, "submit", "--account", "nope", "--user", "bob", "--", "true")
	if code != 1 {
		t.Fatalf("submit to a missing account exited %d", code)
	}
	oneLine(t, "submit to a missing account", errOut, `"nope"`)
}

// TestCLISnapshotSaveRestore saves the cluster state, changes it, restores
// it, and checks the change is gone and the ledger still verifies.
func TestCLISnapshotSaveRestore(t *testing.T) {
	d := needDev(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "first.snap")
	out := d.ok(t, "operator", "snapshot", "save", first)
	if !regexp.MustCompile(`saved a snapshot of the cluster state at raft index [1-9]\d* .* to `).MatchString(out) {
		t.Fatalf("snapshot save printed %q", out)
	}
	d.ok(t, "account", "create", "made-after-snapshot")

	var restored struct {
		Index uint64 `json:"index"`
		Bytes int64  `json:"bytes"`
	}
	d.okJSON(t, &restored, "operator", "snapshot", "restore", first, "--yes")
	st, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if restored.Index == 0 || restored.Bytes != st.Size() {
		t.Fatalf("restore --output json: %+v for a file of %d bytes", restored, st.Size())
	}
	_, errOut, code := d.run(t, "account", "show", "made-after-snapshot")
	if code != 1 {
		t.Fatalf("the account created after the snapshot is still there after the restore (exit %d)", code)
	}
	oneLine(t, "account show of a restored-away account", errOut, "does not exist")
	d.ok(t, "account", "show", "astro")
	if out := d.ok(t, "ledger", "verify"); !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("ledger verify after restore: %q", out)
	}

	second := filepath.Join(dir, "second.snap")
	var saved struct {
		File  string `json:"file"`
		Bytes int64  `json:"bytes"`
		Index uint64 `json:"index"`
	}
	d.okJSON(t, &saved, "operator", "snapshot", "save", second)
	st, err = os.Stat(second)
	if err != nil {
		t.Fatal(err)
	}
	if saved.File != second || saved.Bytes != st.Size() || saved.Index == 0 {
		t.Fatalf("snapshot save --output json: %+v, file of %d bytes", saved, st.Size())
	}
	// A damaged snapshot is refused and changes nothing.
	data, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = d.run(t, "operator", "snapshot", "restore", bad, "--yes")
	if code != 1 {
		t.Fatalf("restore of a damaged snapshot exited %d", code)
	}
	oneLine(t, "restore of a damaged snapshot", errOut, "checksum")
}

// TestCLITokens creates a user token, calls as it, and revokes it.
func TestCLITokens(t *testing.T) {
	d := needDev(t)
	var created struct {
		Token struct {
			ID   string `json:"id"`
			Role string `json:"role"`
			User string `json:"user"`
		} `json:"token"`
		Secret string `json:"secret"`
	}
	d.okJSON(t, &created, "acl", "token", "create", "--role", "user", "--user", "ann", "--description", "cli test", "--expires", "1h")
	if created.Token.ID == "" || created.Token.Role != "TOKEN_ROLE_USER" || created.Token.User != "ann" || len(created.Secret) < 16 {
		t.Fatalf("acl token create --output json: %+v", created)
	}
	var list []struct {
		ID string `json:"id"`
	}
	d.okJSON(t, &list, "acl", "token", "list")
	found := false
	for _, k := range list {
		found = found || k.ID == created.Token.ID
	}
	if !found {
		t.Fatalf("acl token list does not show token %s", created.Token.ID)
	}
	if out := d.ok(t, "acl", "token", "list"); strings.Contains(out, created.Secret) {
		t.Fatal("acl token list shows a secret")
	}
	asAnn := []string{"LONGFAIR_TOKEN=" + created.Secret}
	out, errOut, code := d.runEnv(t, asAnn, "acl", "whoami")
	if code != 0 || !strings.Contains(out, created.Token.ID) || !strings.Contains(out, "ann") {
		t.Fatalf("acl whoami with ann's token exited %d: %s%s", code, out, errOut)
	}
	out = d.ok(t, "acl", "token", "revoke", created.Token.ID)
	if !strings.Contains(out, "revoked user token "+created.Token.ID) {
		t.Fatalf("acl token revoke printed %q", out)
	}
	if !d.info.ACL {
		t.Log("the dev cluster does not check tokens; not checking that the revoked token is refused")
		return
	}
	_, errOut, code = d.runEnv(t, asAnn, "jobs")
	if code != 1 {
		t.Fatalf("a call with a revoked token exited %d", code)
	}
	oneLine(t, "a call with a revoked token", errOut, "revoked")
}
