package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// requireCgroups skips a test on a machine where a worker cannot confine
// its tasks: it must be root, with cgroup v2 or the v1 memory controller
// mounted.
func requireCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("containment needs root to create cgroups; run the test as root")
	}
	_, v1 := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	_, v2 := os.Stat("/sys/fs/cgroup/cgroup.subtree_control")
	if v1 != nil && v2 != nil {
		t.Skip("no cgroup v2 hierarchy nor v1 memory controller is mounted under /sys/fs/cgroup")
	}
}

// startConfinedWorker starts a worker that confines its tasks, under a
// node id of this test process alone: a confined worker reaps the cgroups
// of its node id's predecessor, and test packages run at once.
func (c *cluster) startConfinedWorker(base string) (string, *testcluster.Proc) {
	id := fmt.Sprintf("%s-%d", base, os.Getpid())
	c.t.Cleanup(func() {
		// The worker's parent cgroup, empty once its tasks are gone
		// (the supervisors of a killed worker kill theirs within its kill
		// grace); the test kills the worker, which cannot remove it then.
		dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/*/longfair", id))
		dirs = append(dirs, filepath.Join("/sys/fs/cgroup/longfair", id))
		for _, d := range dirs {
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				err := syscall.Rmdir(d)
				if err == nil || err == syscall.ENOENT {
					break
				}
				if time.Now().After(deadline) {
					c.t.Errorf("remove the worker's cgroup %s: %v", d, err)
					break
				}
			}
		}
	})
	return id, c.startWorker(id, "--unconfined=false")
}

// cli runs the longfair command against the cluster's servers.
func (c *cluster) cli(ctx context.Context, args ...string) string {
	c.t.Helper()
	cmd := exec.CommandContext(ctx, binary, append(args[:1:1], append([]string{}, args[1:]...)...)...)
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.grpcAddrs())
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("longfair %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Measured usage: a confined worker measures each attempt's CPU seconds
// and peak memory in its cgroup, and `longfair job` shows them against the
// request; a task that allocates past its memory request is killed by
// the kernel, ends failed with the reason, and is charged for what ran.
func TestConfinedTasksShowWhatTheyUsed(t *testing.T) {
	requireCgroups(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	id, _ := c.startConfinedWorker("cw")
	c.waitNodes(ctx, map[string]bool{id: true})
	conf := c.nodes(ctx)[id].GetConfinement()
	if conf != "cgroup-v1" && conf != "cgroup-v2" {
		t.Fatalf("the confined worker's node says its confinement is %q", conf)
	}
	if out := c.cli(ctx, "nodes"); !strings.Contains(out, "CONFINEMENT") || !strings.Contains(out, conf) {
		t.Errorf("longfair nodes does not show the node's confinement %s:\n%s", conf, out)
	}

	gi := int64(1 << 30)
	busy := c.submit(ctx, alpha, alphaUser, "busy", 1, map[string]float64{"cpu": 1, "mem": float64(gi)}, time.Minute, busyLoop(t))
	mem := c.submit(ctx, alpha, alphaUser, "mem", 1, map[string]float64{"cpu": 1, "mem": float64(gi)}, time.Minute, `dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null`)
	oom := c.submit(ctx, alpha, alphaUser, "oom", 1, map[string]float64{"cpu": 1, "mem": 64 << 20}, time.Minute, `sleep 1; head -c 200M /dev/zero | tail`)
	jobs := c.waitEnded(ctx, busy, mem, oom)

	bt := c.tasks(ctx, busy)[0]
	if got := bt.GetCpuSeconds(); got < 1.8 || got > 2.2 {
		t.Errorf("a 2 s busy loop is reported to have used %.3f CPU seconds", got)
	}
	out := c.cli(ctx, "job", "show", fmt.Sprint(busy))
	t.Logf("longfair job show %d:\n%s", busy, out)
	if want := fmt.Sprintf("%.2f CPU seconds used", bt.GetCpuSeconds()); !strings.Contains(out, want) {
		t.Errorf("longfair job does not say %q", want)
	}

	mt := c.tasks(ctx, mem)[0]
	if r := float64(mt.GetPeakMemBytes()) / (100 << 20); r < 0.9 || r > 1.1 {
		t.Errorf("a 100 MiB allocation is reported to have peaked at %d bytes (%.2f of 100 MiB)", mt.GetPeakMemBytes(), r)
	}
	out = c.cli(ctx, "job", "show", fmt.Sprint(mem))
	t.Logf("longfair job show %d:\n%s", mem, out)
	if want := "peak " + client.FormatQuantity("mem", float64(mt.GetPeakMemBytes())) + " of 1G requested"; !strings.Contains(out, want) {
		t.Errorf("longfair job does not say %q", want)
	}

	ot := c.tasks(ctx, oom)[0]
	const reason = "exceeded its memory request of 64M"
	if jobs[2].GetState() != longfairv1.JobState_JOB_STATE_FAILED || ot.GetReason() != reason {
		t.Errorf("the job that allocated past its memory ended %v with reason %q; want failed, %q", jobs[2].GetState(), ot.GetReason(), reason)
	}
	if ot.GetChargedMicroSu() <= 0 || ot.GetRuntime().AsDuration() < time.Second {
		t.Errorf("the task killed for its memory ran %v and was charged %d µSU; want charged for what ran", ot.GetRuntime().AsDuration(), ot.GetChargedMicroSu())
	}
	out = c.cli(ctx, "job", "show", fmt.Sprint(oom))
	t.Logf("longfair job show %d:\n%s", oom, out)
	if !strings.Contains(out, reason) {
		t.Errorf("longfair job does not say %q", reason)
	}
}

// busyLoop is a script that spends 2 s of its own CPU time, however busy
// the machine is: python3 itself, not a version manager's shim (which
// would add its own CPU time).
func busyLoop(t *testing.T) string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("no python3 for the busy loop: %v", err)
	}
	return strings.TrimSpace(string(out)) + ` -c 'import time
while time.process_time() < 2: pass'`
}

// forkScript starts 50 sleeps that leave the task's process group
// (setsid) and writes their pids to path.
func forkScript(path string) string {
	return fmt.Sprintf(`i=0; while [ $i -lt 50 ]; do setsid sleep 300 & echo $! >> %s; i=$((i+1)); done; wait`, path)
}

// waitPIDs waits until path lists 50 pids, and returns them.
func waitPIDs(ctx context.Context, t *testing.T, path string) []int {
	t.Helper()
	var pids []int
	testcluster.WaitFor(ctx, t, "the task's 50 sleeps", func() bool {
		b, _ := os.ReadFile(path)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return len(pids) >= 50
	})
	return pids
}

// alive counts the processes of pids still running (not zombies).
func alive(pids []int) int {
	n := 0
	for _, p := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] != "Z" {
			n++
		}
	}
	return n
}

func waitNoneAlive(ctx context.Context, t *testing.T, what string, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pids) > 0 {
		if time.Now().After(deadline) {
			n := alive(pids)
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("%d of the task's 50 sleeps outlived it %s", n, what)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name, which may hold spaces.
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// No orphans: a task whose processes leave its process group (50 setsid
// sleeps) leaves none behind when it is cancelled, when its walltime
// runs out, and when its worker is killed with kill -9 — its supervisor
// too, so that nothing but the restarted worker can clean up.
func TestConfinedTaskLeavesNoOrphans(t *testing.T) {
	requireCgroups(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 1)
	alpha, alphaUser := c.account(ctx, "alpha")
	id, w := c.startConfinedWorker("orphans")
	c.waitNodes(ctx, map[string]bool{id: true})
	demand := map[string]float64{"cpu": 1, "mem": 256 << 20}

	t.Run("cancel", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pids")
		job := c.submit(ctx, alpha, alphaUser, "cancel", 1, demand, time.Hour, forkScript(path))
		pids := waitPIDs(ctx, t, path)
		_, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Job, error) {
			return longfairv1.NewJobsClient(conn).CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: job})
		})
		must(t, err, "cancel job %d", job)
		c.waitEnded(ctx, job)
		waitNoneAlive(ctx, t, "its cancel", pids)
	})
	t.Run("walltime", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pids")
		job := c.submit(ctx, alpha, alphaUser, "walltime", 1, demand, 5*time.Second, forkScript(path))
		pids := waitPIDs(ctx, t, path)
		c.waitEnded(ctx, job)
		waitNoneAlive(ctx, t, "its walltime", pids)
	})
	t.Run("kill -9", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pids")
		c.submit(ctx, alpha, alphaUser, "killed", 1, demand, time.Hour, forkScript(path))
		pids := waitPIDs(ctx, t, path)
		// Stop the worker first: a supervisor that sees its worker's
		// control pipe close kills its task at once, and one killed
		// before its worker is seen dying by the worker, which kills the
		// task's cgroup. Stopped, the worker holds its pipes open and
		// reacts to nothing while its supervisors are killed.
		supervisors := children(w.Cmd.Process.Pid)
		w.Signal(syscall.SIGSTOP)
		for _, s := range supervisors {
			_ = syscall.Kill(s, syscall.SIGKILL)
		}
		w.Kill()
		time.Sleep(200 * time.Millisecond)
		if alive(pids) == 0 {
			t.Fatal("the task's sleeps died with their worker and supervisor: this shows nothing")
		}
		t.Logf("%d sleeps outlived their worker and supervisor", alive(pids))
		w = c.startWorker(id, "--unconfined=false")
		c.waitNodes(ctx, map[string]bool{id: true})
		w.WaitLog(ctx, t, "killed the tasks a previous worker process left")
		waitNoneAlive(ctx, t, "its worker's kill -9 and restart", pids)
	})
}

// Safe defaults: a worker that is not root cannot confine its tasks, and
// refuses to start unless it is told to run them unconfined, saying what
// it lacks and what to do.
func TestUnconfinableWorkerRefusesToStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the test starts a worker as another user (nobody), which needs root")
	}
	dir, err := os.MkdirTemp("", "longfair-unconfined-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// A copy nobody may run: the built binary's directory is root's.
	bin := filepath.Join(dir, "longfair")
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	worker := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"worker", "--node-id", "nobody-node", "--join", "127.0.0.1:1",
			"--gossip-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--work-dir", filepath.Join(dir, "work")}, extra...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
	out, err := worker().CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not root") || !strings.Contains(string(out), "--unconfined") {
		t.Fatalf("a worker running as nobody started confined, or did not say why not (%v):\n%s", err, out)
	}
	t.Logf("refused: %s", out)

	// With --unconfined it starts, and says so.
	cmd := worker("--unconfined", "--log-format", "json")
	logPath := filepath.Join(dir, "worker.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), `"worker started"`) {
			if !strings.Contains(string(b), `"confinement":"unconfined"`) {
				t.Errorf("the unconfined worker's start does not say it is unconfined:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker given --unconfined did not start:\n%s", b)
		}
	}
}
