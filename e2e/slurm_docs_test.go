package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// slurmShell is a directory holding the scripts of testdata/slurm, where
// the scripts write their output, and the environment a Slurm user's
// shell would have: `sbatch` and `scancel` on PATH (links to the client
// binary, longfair-client, which is them when run under their names), the
// cluster's address and the user and account to submit as.
type slurmShell struct {
	dir, bin string
	env      []string
}

func newSlurmShell(t *testing.T, c *cluster, account, user string) *slurmShell {
	t.Helper()
	bin := t.TempDir()
	for _, name := range []string{"sbatch", "scancel", "sacct", "squeue"} {
		if err := os.Symlink(clientBinary, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	scripts, err := os.ReadDir(filepath.Join("testdata", "slurm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(filepath.Join("testdata", "slurm", s.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name()), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "LONGFAIR_") || strings.HasPrefix(kv, "SLURM_")
	})
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		client.EnvAddr+"="+c.live()[0].GRPC, "LONGFAIR_USER="+user, "LONGFAIR_ACCOUNT="+account)
	return &slurmShell{dir: dir, bin: bin, env: env}
}

// run runs a command line in the shell's directory and returns its
// output; it fails the test when the command fails. A name without a
// slash is one of the shell's Slurm commands.
func (s *slurmShell) run(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	if !strings.Contains(name, "/") {
		name = filepath.Join(s.bin, name)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// read returns a file the jobs wrote in the shell's directory.
func (s *slurmShell) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatalf("the job wrote no %s: %v", name, err)
	}
	return string(b)
}

// vars reads the NAME=value lines of a job's output.
func vars(out string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m
}

// stamp reads the "<what> <unix seconds>" line a script printed.
func stamp(t *testing.T, out, what string) time.Time {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(what) + ` (\d+\.\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in the job's output:\n%s", what, out)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, int64(f*1e9))
}

// batchID is the id sbatch printed ("Submitted batch job N", or N alone
// with --parsable).
func batchID(t *testing.T, out string) uint64 {
	t.Helper()
	text := strings.TrimSpace(out)
	if m := regexp.MustCompile(`(?m)^Submitted batch job (\d+)$`).FindStringSubmatch(out); m != nil {
		text = m[1]
	}
	id, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		t.Fatalf("sbatch printed %q, not a job id", out)
	}
	return id
}

// mostAtOnce is the largest number of the intervals [start, end) that
// overlap at one instant.
func mostAtOnce(spans [][2]time.Time) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s[0], 1}, edge{s[1], -1})
	}
	// At the same instant an end comes before a start: [a,b) and [b,c)
	// do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// Scripts written as public Slurm documentation writes them
// (testdata/slurm, each naming its source), submitted with `sbatch` and
// `scancel` as a Slurm user types them, run on a real worker and do what
// the documentation says: the files they write and their names, the
// SLURM_* values they see, an array's throttle, an afterok chain's
// order, and --mem-per-cpu × cores as the job's memory.
//
// One way longfair differs, on purpose: every task of an array is one
// job, so SLURM_JOB_ID (and %j) is the array's id in each task where
// Slurm gives each task an id of its own; SLURM_ARRAY_JOB_ID and %A are
// the same in both.
func TestSlurmDocumentationScripts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	acct, user := c.account(ctx, "slurmdocs")
	// Twice the array's throttle in cores and room for its memory, so
	// that the throttle, not the node, is what limits it.
	c.startWorker("w1", "--cpu", "8", "--mem", "64G")
	c.waitNodes(ctx, map[string]bool{"w1": true})
	sh := newSlurmShell(t, c, acct, user)

	arrayWithThrottle(ctx, t, c, sh)
	arrayOutputNames(ctx, t, c, sh)
	memPerCPU(ctx, t, c, sh)
	afterokChain(ctx, t, c, sh)
	scancelHeld(ctx, t, c, sh)
}

// array_throttle.sh: --array=0-15%4 runs 16 tasks, never more than 4 at
// once, each writing array_<job>_<index>.out and .err.
func arrayWithThrottle(ctx context.Context, t *testing.T, c *cluster, sh *slurmShell) {
	t.Helper()
	id := batchID(t, sh.run(ctx, t, "sbatch", "array_throttle.sh"))
	if j := c.waitEnded(ctx, id)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetTasks() != 16 || j.GetArrayThrottle() != 4 {
		t.Fatalf("array_throttle.sh: job %d %v with %d tasks, throttle %d; want succeeded, 16, 4", id, j.GetState(), j.GetTasks(), j.GetArrayThrottle())
	}
	var scriptSpans [][2]time.Time
	for index := range 16 {
		name := fmt.Sprintf("array_%d_%d", id, index)
		out := sh.read(t, name+".out")
		v := vars(out)
		want := map[string]string{
			"SLURM_JOB_ID": fmt.Sprint(id), "SLURM_ARRAY_JOB_ID": fmt.Sprint(id), "SLURM_ARRAY_TASK_ID": fmt.Sprint(index),
			"SLURM_ARRAY_TASK_COUNT": "16", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "15",
		}
		for k, w := range want {
			if v[k] != w {
				t.Errorf("%s.out: %s=%q, want %q", name, k, v[k], w)
			}
		}
		if errOut := sh.read(t, name+".err"); errOut != "to stderr\n" {
			t.Errorf("%s.err holds %q, want the task's stderr alone", name, errOut)
		}
		scriptSpans = append(scriptSpans, [2]time.Time{stamp(t, out, "started"), stamp(t, out, "ended")})
	}
	// As the tasks saw it, and as the ledger records it.
	var ledgerSpans [][2]time.Time
	for _, task := range c.tasks(ctx, id) {
		ledgerSpans = append(ledgerSpans, [2]time.Time{task.GetStartedAt().AsTime(), task.GetEndedAt().AsTime()})
	}
	if len(ledgerSpans) != 16 {
		t.Fatalf("the array has %d task attempts, want 16", len(ledgerSpans))
	}
	t.Logf("--array=0-15%%4: at most %d tasks at once by the scripts' clocks, %d by the ledger", mostAtOnce(scriptSpans), mostAtOnce(ledgerSpans))
	if n := mostAtOnce(scriptSpans); n > 4 || n < 1 {
		t.Errorf("by the scripts' clocks %d tasks ran at once under --array=0-15%%4", n)
	}
	if n := mostAtOnce(ledgerSpans); n > 4 || n < 1 {
		t.Errorf("by the ledger %d tasks ran at once under --array=0-15%%4", n)
	}
}

// job_array.html's own command line, `sbatch -o slurm-%A_%a.out
// --array=1-3 -N1 tmp`: slurm-<job>_1.out to _3.out, each with the
// variables the page lists.
func arrayOutputNames(ctx context.Context, t *testing.T, c *cluster, sh *slurmShell) {
	t.Helper()
	id := batchID(t, sh.run(ctx, t, "sbatch", "-o", "slurm-%A_%a.out", "--array=1-3", "-N1", "tmp"))
	if j := c.waitEnded(ctx, id)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("tmp: job %d %v", id, j.GetState())
	}
	for index := 1; index <= 3; index++ {
		v := vars(sh.read(t, fmt.Sprintf("slurm-%d_%d.out", id, index)))
		want := map[string]string{
			"SLURM_JOB_ID": fmt.Sprint(id), "SLURM_ARRAY_JOB_ID": fmt.Sprint(id), "SLURM_ARRAY_TASK_ID": fmt.Sprint(index),
			"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MAX": "3", "SLURM_ARRAY_TASK_MIN": "1",
		}
		for k, w := range want {
			if v[k] != w {
				t.Errorf("slurm-%d_%d.out: %s=%q, want %q", id, index, k, v[k], w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(sh.dir, fmt.Sprintf("slurm-%d_0.out", id))); err == nil {
		t.Errorf("--array=1-3 wrote a file for index 0")
	}
}

// mem_per_cpu.sh: --cpus-per-task=4 --mem-per-cpu=2G asks 8 GB in all,
// which `longfair job show` reads back; the script sees its cores and
// its per-core memory (in MB) in SLURM_CPUS_PER_TASK and
// SLURM_MEM_PER_CPU, no SLURM_ARRAY_* (it is no array), and writes
// slurm-<job>.out (the default).
func memPerCPU(ctx context.Context, t *testing.T, c *cluster, sh *slurmShell) {
	t.Helper()
	id := batchID(t, sh.run(ctx, t, "sbatch", "mem_per_cpu.sh"))
	if j := c.waitEnded(ctx, id)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("mem_per_cpu.sh: job %d %v", id, j.GetState())
	}
	var shown struct {
		Job struct {
			Name   string             `json:"name"`
			Demand map[string]float64 `json:"demand"`
		} `json:"job"`
	}
	out := c.cli(ctx, "job", "show", fmt.Sprint(id), "--output", "json")
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("longfair job show --output json: %v\n%s", err, out)
	}
	const cpus, perCPU = 4, 2 << 30
	if d := shown.Job.Demand; d["cpu"] != cpus || d["mem"] != cpus*perCPU || shown.Job.Name != "mem-per-cpu" {
		t.Errorf("job %d %q asks %v; want cpu %d and mem %d (--mem-per-cpu 2G × 4 cores)", id, shown.Job.Name, d, cpus, cpus*perCPU)
	}
	v := vars(sh.read(t, fmt.Sprintf("slurm-%d.out", id)))
	want := map[string]string{"OMP_NUM_THREADS": "4", "SLURM_CPUS_PER_TASK": "4", "SLURM_MEM_PER_CPU": fmt.Sprint(perCPU >> 20), "SLURM_JOB_ID": fmt.Sprint(id),
		// Not a job array: no array variables.
		"SLURM_ARRAY_JOB_ID": "", "SLURM_ARRAY_TASK_ID": ""}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("slurm-%d.out: %s=%q, want %q", id, k, v[k], w)
		}
	}
}

// submit_chain.sh, a driver calling sbatch --parsable and
// --dependency=afterok:$jid: three jobs, each starting only after the
// one before it succeeded, each reading what the one before wrote.
func afterokChain(ctx context.Context, t *testing.T, c *cluster, sh *slurmShell) {
	t.Helper()
	out := sh.run(ctx, t, "/bin/bash", "submit_chain.sh")
	m := regexp.MustCompile(`(?m)^prep=(\d+) work=(\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("submit_chain.sh printed no ids:\n%s", out)
	}
	prep, _ := strconv.ParseUint(m[1], 10, 64)
	work, _ := strconv.ParseUint(m[2], 10, 64)
	collect := batchID(t, out)
	jobs := c.waitEnded(ctx, prep, work, collect)
	for i, j := range jobs {
		if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
			t.Fatalf("chain job %d (%d of 3, %q) ended %v (%s)", j.GetId(), i+1, j.GetName(), j.GetState(), j.GetReason())
		}
	}
	if want := fmt.Sprintf("afterok:%d", prep); jobs[1].GetDependency() != want {
		t.Errorf("the second job's dependency is %q, want %q", jobs[1].GetDependency(), want)
	}
	if want := fmt.Sprintf("afterok:%d", work); jobs[2].GetDependency() != want {
		t.Errorf("the third job's dependency is %q, want %q", jobs[2].GetDependency(), want)
	}
	// Each starts only after the one it names has ended, by the ledger.
	for i := 1; i < len(jobs); i++ {
		before := c.tasks(ctx, jobs[i-1].GetId())
		after := c.tasks(ctx, jobs[i].GetId())
		if len(before) != 1 || len(after) != 1 {
			t.Fatalf("chain jobs with %d and %d attempts, want one each", len(before), len(after))
		}
		if started, ended := after[0].GetAssignedAt().AsTime(), before[0].GetEndedAt().AsTime(); started.Before(ended) {
			t.Errorf("job %d was placed at %v, before job %d, which it waits for, ended at %v", jobs[i].GetId(), started, jobs[i-1].GetId(), ended)
		}
	}
	prepOut := sh.read(t, fmt.Sprintf("slurm-%d.out", prep))
	workOut := sh.read(t, fmt.Sprintf("slurm-%d.out", work))
	collectOut := sh.read(t, fmt.Sprintf("slurm-%d.out", collect))
	if !stamp(t, workOut, "work started").After(stamp(t, prepOut, "prep ended")) {
		t.Errorf("by the scripts' clocks the second job started before the first ended:\n%s\n%s", prepOut, workOut)
	}
	if !strings.Contains(workOut, fmt.Sprintf("input of job %d\n", prep)) || !strings.Contains(collectOut, fmt.Sprintf("result of job %d\n", work)) {
		t.Errorf("a job did not read what the one before it wrote:\n%s\n%s", workOut, collectOut)
	}
}

// `scancel ID` cancels the job `sbatch --hold` submitted.
func scancelHeld(ctx context.Context, t *testing.T, c *cluster, sh *slurmShell) {
	t.Helper()
	id := batchID(t, sh.run(ctx, t, "sbatch", "--parsable", "--hold", "tmp"))
	sh.run(ctx, t, "scancel", fmt.Sprint(id))
	if j := c.job(ctx, id); j.GetState() != longfairv1.JobState_JOB_STATE_CANCELLED {
		t.Fatalf("scancel %d: the job is %v", id, j.GetState())
	}
}
