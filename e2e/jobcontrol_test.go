package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// cliFails runs a longfair command that must fail and returns its exit
// code and output.
func (c *cluster) cliFails(ctx context.Context, args ...string) (int, string) {
	c.t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.live()[0].GRPC)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		c.t.Fatalf("longfair %s did not fail: %v\n%s", strings.Join(args, " "), err, out)
	}
	return ee.ExitCode(), string(out)
}

// waitFile waits until path exists.
func waitFile(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	testcluster.WaitFor(ctx, t, "file "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// `longfair signal` on real workers: a task that traps USR1 gets it and
// goes on to end as it chooses; the signal reaches its children too; a
// job that runs nothing and a signal no job may be sent are refused.
func TestSignalOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	dir := t.TempDir()
	ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
	script := fmt.Sprintf(`trap 'echo USR1 >> %s; exit 7' USR1; touch %s; while :; do sleep 0.1; done`, got, ready)
	id := c.cliSubmit(ctx, "--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m", "--", script)
	waitFile(ctx, t, ready)

	if code, out := c.cliFails(ctx, "signal", "--signal", "SEGV", fmt.Sprint(id)); code != 2 || !strings.Contains(out, "USR1") {
		t.Errorf("signal SEGV: exit %d, want 2 with the signals a job may be sent:\n%s", code, out)
	}
	out := c.cli(ctx, "signal", "-s", "SIGUSR1", fmt.Sprint(id))
	if !strings.Contains(out, "SIGUSR1 sent to 1 running task(s): 0") {
		t.Errorf("longfair signal printed:\n%s", out)
	}
	j := c.waitEnded(ctx, id)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_FAILED {
		t.Errorf("the signalled job ended %v, want failed (its trap exits 7)", j.GetState())
	}
	if tasks := c.tasks(ctx, id); len(tasks) != 1 || tasks[0].GetExitCode() != 7 {
		t.Errorf("tasks of the signalled job: %v; want one that exited 7 from its trap", tasks)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != "USR1\n" {
		t.Errorf("the trap wrote %q (%v), want it to have run once", b, err)
	}
	if code, out := c.cliFails(ctx, "signal", fmt.Sprint(id)); code != 1 || !strings.Contains(out, "no running task") {
		t.Errorf("signal of an ended job: exit %d:\n%s", code, out)
	}
}

// `longfair requeue` on real workers: the running task is stopped, and
// only once it has ended does it run again, from the start, with a new
// attempt; the job is charged for both runs and ends as the rerun does.
func TestRequeueOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "chem")
	dir := t.TempDir()
	log, mark, ready := filepath.Join(dir, "log"), filepath.Join(dir, "mark"), filepath.Join(dir, "ready")
	script := fmt.Sprintf(`if [ -e %[2]s ]; then echo rerun >> %[1]s; exit 0; fi
trap 'echo stopped >> %[1]s; exit 143' TERM
echo first >> %[1]s; touch %[2]s %[3]s
while :; do sleep 0.1; done`, log, mark, ready)
	id := c.cliSubmit(ctx, "--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m", "--", script)
	waitFile(ctx, t, ready)
	if out := c.cli(ctx, "requeue", fmt.Sprint(id)); !strings.Contains(out, fmt.Sprintf("job %d requeued", id)) {
		t.Errorf("longfair requeue printed:\n%s", out)
	}
	j := c.waitEnded(ctx, id)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetRequeues() != 1 {
		t.Fatalf("the requeued job ended %v with %d requeues, want succeeded after 1", j.GetState(), j.GetRequeues())
	}
	b, err := os.ReadFile(log)
	if err != nil || string(b) != "first\nstopped\nrerun\n" {
		t.Fatalf("the task's runs logged %q (%v); want the first run stopped before the rerun began", b, err)
	}
	tasks := c.tasks(ctx, id)
	if len(tasks) != 1 || tasks[0].GetAttempt() != 2 || tasks[0].GetState() != longfairv1.TaskState_TASK_STATE_SUCCEEDED {
		t.Fatalf("tasks: %v; want attempt 2 succeeded", tasks)
	}
	if j.GetChargedMicroSu() <= tasks[0].GetChargedMicroSu() {
		t.Errorf("the job was charged %d µSU, no more than its rerun's %d: the stopped run went free", j.GetChargedMicroSu(), tasks[0].GetChargedMicroSu())
	}
	if code, out := c.cliFails(ctx, "requeue", fmt.Sprint(id)); code != 1 || !strings.Contains(out, "nothing to requeue") {
		t.Errorf("requeue of an ended job: exit %d:\n%s", code, out)
	}
}

// A signal reaches every node of a parallel task: the head's script and
// what `longfair exec` started on the other node each trap it, while the
// other node's share of the task (and the exec relaying to it) lives on.
func TestSignalReachesEveryNodeOfAParallelTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startParallelCluster(ctx, t, []string{"w1", "w2"})
	got, ready := filepath.Join(c.dir, "got"), filepath.Join(c.dir, "ready")
	script := fmt.Sprintf(`other=$(echo "$LONGFAIR_NODELIST" | cut -d, -f2)
"$LONGFAIR_RSH" "$other" 'trap "sleep 0.5; echo member >> %[1]s; exit 0" USR1; touch %[2]s.member; while :; do sleep 0.1; done' &
relay=$!
trap 'echo head >> %[1]s; wait $relay; echo "exec=$?" >> %[1]s; exit 0' USR1
touch %[2]s.head
while :; do sleep 0.1; done`, got, ready)
	job := c.submitParallel(ctx, acct, user, "signalled", 2, map[string]float64{"cpu": 1}, time.Minute, script)
	waitFile(ctx, t, ready+".head")
	waitFile(ctx, t, ready+".member")
	if out := c.cli(ctx, "signal", "-s", "USR1", fmt.Sprint(job)); !strings.Contains(out, "sent to 1 running task(s)") {
		t.Errorf("longfair signal printed:\n%s", out)
	}
	j := c.waitEnded(ctx, job)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Errorf("the parallel job ended %v, want succeeded: both traps exit 0", j.GetState())
	}
	b, err := os.ReadFile(got)
	lines := strings.Fields(string(b))
	slices.Sort(lines)
	if err != nil || !slices.Equal(lines, []string{"exec=0", "head", "member"}) {
		t.Errorf("the traps wrote %q (%v); want the head's and the member's once each, and the exec relaying to the member to exit 0 with it", b, err)
	}
}
