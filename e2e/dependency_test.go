package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// startOneWorker starts one server and one worker (w1: 4 cores) with
// an account of that name, and waits until the worker is up.
func startOneWorker(ctx context.Context, t *testing.T, account string) (c *cluster, acct, user string) {
	t.Helper()
	c = startCluster(ctx, t, 1)
	acct, user = c.account(ctx, account)
	c.startWorker("w1")
	c.waitNodes(ctx, map[string]bool{"w1": true})
	return c, acct, user
}

// submitted is the job id `longfair submit` printed.
var submitted = regexp.MustCompile(`submitted job (\d+)`)

func (c *cluster) cliSubmit(ctx context.Context, args ...string) uint64 {
	c.t.Helper()
	out := c.cli(ctx, append([]string{"submit"}, args...)...)
	m := submitted.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("longfair submit printed no job id:\n%s", out)
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	return id
}

// A chain through the CLI on real workers: a job that fails releases
// its afternotok and afterany dependents and fails its afterok one,
// whose task never runs; the waiting job says what it waits for in
// `job show` and `explain`, and the failed one why it failed.
func TestDependencyChainOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	marks := t.TempDir()
	mark := func(name string) string { return fmt.Sprintf("touch %s", filepath.Join(marks, name)) }
	base := []string{"--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m"}
	first := c.cliSubmit(ctx, append(base, "--", "sleep 2; exit 3")...)
	dep := func(d, name string) uint64 {
		return c.cliSubmit(ctx, append(base, "--dependency", d, "--name", name, "--", mark(name))...)
	}
	onOK := dep(fmt.Sprintf("afterok:%d", first), "on-ok")
	onFail := dep(fmt.Sprintf("afternotok:%d", first), "on-fail")
	after := dep(fmt.Sprintf("afterany:%d,afterok:%d", first, onFail), "after-both")

	out := c.cli(ctx, "explain", fmt.Sprint(onOK))
	if want := fmt.Sprintf("it waits for its dependency: afterok:%d", first); !strings.Contains(out, want) {
		t.Errorf("explain of the waiting job does not say %q:\n%s", want, out)
	}
	jobs := c.waitEnded(ctx, first, onOK, onFail, after)
	if jobs[0].GetState() != longfairv1.JobState_JOB_STATE_FAILED || jobs[1].GetState() != longfairv1.JobState_JOB_STATE_FAILED ||
		jobs[2].GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || jobs[3].GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("states: first %v, afterok %v, afternotok %v, afterany+afterok %v; want failed, failed, succeeded, succeeded",
			jobs[0].GetState(), jobs[1].GetState(), jobs[2].GetState(), jobs[3].GetState())
	}
	for name, ran := range map[string]bool{"on-ok": false, "on-fail": true, "after-both": true} {
		if _, err := os.Stat(filepath.Join(marks, name)); (err == nil) != ran {
			t.Errorf("job %s ran: %v, want %v", name, err == nil, ran)
		}
	}
	if n := len(c.tasks(ctx, onOK)); n != 0 {
		t.Errorf("the afterok job whose dependency failed has %d task attempts, want none", n)
	}
	out = c.cli(ctx, "job", "show", fmt.Sprint(onOK))
	if want := fmt.Sprintf("can never be met: job %d ended without succeeding", first); !strings.Contains(out, want) {
		t.Errorf("job show of the failed dependent does not say %q:\n%s", want, out)
	}
	if jobs[1].GetChargedMicroSu() != 0 {
		t.Errorf("the job that never ran was charged %d µSU", jobs[1].GetChargedMicroSu())
	}
}

// A job submitted --hold runs nothing until `longfair release`.
func TestHoldAndReleaseOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	id := c.cliSubmit(ctx, "--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m", "--hold", "--", "true")
	// A pass runs at once when a job is submitted and when a node has
	// room: a second is many passes.
	time.Sleep(time.Second)
	if j := c.job(ctx, id); j.GetState() != longfairv1.JobState_JOB_STATE_PENDING || !j.GetHeld() {
		t.Fatalf("the held job is %v (held %v)", j.GetState(), j.GetHeld())
	}
	if out := c.cli(ctx, "explain", fmt.Sprint(id)); !strings.Contains(out, "it is held") {
		t.Errorf("explain of the held job does not say it is held:\n%s", out)
	}
	if out := c.cli(ctx, "release", fmt.Sprint(id)); !strings.Contains(out, "released") {
		t.Errorf("longfair release printed:\n%s", out)
	}
	if j := c.waitEnded(ctx, id)[0]; j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the released job ended %v", j.GetState())
	}
}

// Limits through the CLI on real workers: an account limited to one
// running task runs a 3-task array one task at a time, explain names the
// limit, and a submission over its walltime limit is refused with it.
func TestLimitsOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	if out := c.cli(ctx, "limits", "set", "--account", acct, "--max-running-tasks", "1", "--max-walltime", "10m"); !strings.Contains(out, "max-running-tasks 1") {
		t.Fatalf("longfair limits set printed:\n%s", out)
	}
	base := []string{"submit", "--account", acct, "--user", user, "--cpu", "1"}
	cmd := exec.CommandContext(ctx, binary, append(base, "--walltime", "1h", "--", "true")...)
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.live()[0].GRPC)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "max_walltime") {
		t.Fatalf("a submission over the walltime limit: %v\n%s", err, out)
	}
	id := c.cliSubmit(ctx, append(base[1:], "--walltime", "1m", "--array", "3", "--", "sleep 1")...)
	explained := false
	for {
		j := c.job(ctx, id)
		if j.GetRunningTasks() > 1 {
			t.Fatalf("%d tasks run at once under a limit of 1", j.GetRunningTasks())
		}
		if !explained && j.GetRunningTasks() == 1 && j.GetPendingTasks() > 0 {
			out := c.cli(ctx, "explain", fmt.Sprint(id))
			explained = strings.Contains(out, "account chem's limit of 1 running tasks")
		}
		if client.JobEnded(j) {
			if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
				t.Fatalf("the limited array ended %v", j.GetState())
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !explained {
		t.Error("explain never named the account's running-task limit while a task waited for it")
	}
}

// `longfair update` through the CLI: a waiting job's dependency is
// cleared and it runs; a cycle is refused with the chain.
func TestUpdateOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	base := []string{"--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m"}
	first := c.cliSubmit(ctx, append(base, "--hold", "--", "true")...)
	second := c.cliSubmit(ctx, append(base, "--dependency", fmt.Sprintf("afterok:%d", first), "--", "true")...)
	cmd := exec.CommandContext(ctx, binary, "update", fmt.Sprint(first), "--dependency", fmt.Sprintf("afterany:%d", second))
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.live()[0].GRPC)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "cycle") {
		t.Fatalf("an update closing a cycle: %v\n%s", err, out)
	}
	if out := c.cli(ctx, "update", fmt.Sprint(second), "--dependency", "", "--name", "free"); !strings.Contains(out, "updated") {
		t.Fatalf("longfair update printed:\n%s", out)
	}
	j := c.waitEnded(ctx, second)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetName() != "free" {
		t.Fatalf("the freed job ended %v named %q", j.GetState(), j.GetName())
	}
}

// A walltime lowered while an array runs: the task already running keeps
// the walltime it was sent, so it runs, and is charged, to its end; the
// next task, placed after the update, is sent the new walltime and is
// stopped at it, whatever the leader had cached of the job.
func TestLoweredWalltimeOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	const sleep = 4 * time.Second
	id := c.cliSubmit(ctx, "--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m", "--array", "2", "--throttle", "1", "--", "sleep", fmt.Sprint(sleep.Seconds()))
	testcluster.WaitFor(ctx, t, "task 0 running", func() bool {
		ts := c.tasks(ctx, id)
		return len(ts) > 0 && ts[0].GetState() == longfairv1.TaskState_TASK_STATE_RUNNING
	})
	c.cli(ctx, "update", fmt.Sprint(id), "--walltime", "1s")
	c.waitEnded(ctx, id)
	ts := c.tasks(ctx, id)
	if len(ts) != 2 {
		t.Fatalf("job %d has %d tasks, want 2", id, len(ts))
	}
	if first := ts[0]; first.GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED || first.GetRuntime().AsDuration() < sleep {
		t.Errorf("the task running at the update ended %v after %v: want it to run its %v and be charged for it", first.GetState(), first.GetRuntime().AsDuration(), sleep)
	}
	if next := ts[1]; next.GetState() == longfairv1.TaskState_TASK_STATE_SUCCEEDED || next.GetRuntime().AsDuration() >= sleep {
		t.Errorf("the task placed after the update ended %v after %v: want it stopped at its walltime of 1s", next.GetState(), next.GetRuntime().AsDuration())
	}
	// The first says the walltime it kept (the second, ended under its
	// job's, says none), and `job show` says why it was charged past the
	// job's.
	if a, b := ts[0].GetWalltime(), ts[1].GetWalltime(); a.AsDuration() != time.Minute || b != nil {
		t.Errorf("the tasks' walltimes read %v and %v, want 1m (kept) and none", a, b)
	}
	if out := c.cli(ctx, "job", "show", fmt.Sprint(id)); !strings.Contains(out, "kept the walltime of 1m0s") {
		t.Errorf("job show does not say the first task kept its walltime:\n%s", out)
	}
}
