package e2e

import (
	"context"
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

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// mpi is an MPI implementation as Debian installs it: its compiler and
// launcher under their own names (mpicc and mpiexec are alternatives one
// of them takes), and how its launcher starts 2 ranks per node of a task
// through the task's rsh agent.
type mpi struct {
	name     string
	tools    []string // what must be installed; the first is the compiler
	launcher func(hello, out string, args ...string) string
}

// mpich runs the ranks with Hydra, its rsh launcher set to the task's
// agent.
var mpich = mpi{
	name:  "MPICH",
	tools: []string{"mpicc.mpich", "mpiexec.hydra", "hydra_pmi_proxy"},
	launcher: func(hello, out string, args ...string) string {
		return fmt.Sprintf(`mpiexec.hydra -launcher rsh -launcher-exec "$LONGFAIR_RSH" -f "$LONGFAIR_HOSTFILE" -ppn 2 -n $((2 * LONGFAIR_NNODES)) %s %s > %s 2>&1`,
			hello, strings.Join(args, " "), out)
	},
}

// openMPI starts its daemons (orted) through the task's agent as its
// rsh (plm_rsh_agent), two ranks per node of the hostfile, over TCP on
// loopback (the nodes of a test share one host). The tests' workers run
// as root, which Open MPI refuses unless told. rtc_hwloc_vmhole none keeps
// orted from writing its hardware topology into shared memory at an
// address it guessed free: Open MPI 4.1.4 with Debian's hwloc segfaulted
// there now and then (hwloc_shmem_topology_write, once in a CI run), a
// fault of orted's start-up, not of the launch. orte_tmpdir_base gives
// each run its own session directories: Open MPI names them by host,
// uid and a hash of mpirun's pid, and runs on one host met a stale one
// ("mkdir … File exists", once in a make test).
var openMPI = mpi{
	name:  "Open MPI",
	tools: []string{"mpicc.openmpi", "mpirun.openmpi", "orted"},
	launcher: func(hello, out string, args ...string) string {
		return fmt.Sprintf(`OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --mca plm_rsh_agent "$LONGFAIR_RSH" --mca rtc_hwloc_vmhole none --hostfile "$LONGFAIR_HOSTFILE" `+
			`--map-by ppr:2:node --oversubscribe -np $((2 * LONGFAIR_NNODES)) --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo `+
			`--mca orte_tmpdir_base %s -x LONGFAIR_EXEC_NODE %s %s > %s 2>&1`,
			filepath.Dir(out), hello, strings.Join(args, " "), out)
	},
}

// hello builds testdata/mpi_hello.c with m's compiler into dir, or skips
// when m is not installed (`make test` installs Debian's mpich and
// openmpi-bin).
func (m mpi) hello(t *testing.T, dir string) string {
	t.Helper()
	for _, tool := range m.tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s's %s is not installed (`make deps` installs it from Debian's packages): %v", m.name, tool, err)
		}
	}
	src, err := filepath.Abs("testdata/mpi_hello.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mpi_hello."+strings.ReplaceAll(strings.ToLower(m.name), " ", ""))
	if out, err := exec.Command(m.tools[0], "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", m.tools[0], err, out)
	}
	return bin
}

// startParallelCluster starts one server and a 2-core worker for each of
// nodes, with an account "physics", and waits until the nodes are up.
func startParallelCluster(ctx context.Context, t *testing.T, nodes []string) (c *cluster, account, user string) {
	t.Helper()
	c = startCluster(ctx, t, 1)
	account, user = c.account(ctx, "physics")
	up := map[string]bool{}
	for _, w := range nodes {
		c.startWorker(w, "--cpu", "2")
		up[w] = true
	}
	c.waitNodes(ctx, up)
	return c, account, user
}

// submitParallel submits one task spanning nodes nodes with demand on
// each, run at most once.
func (c *cluster) submitParallel(ctx context.Context, account, user, rid string, nodes int32, demand map[string]float64, walltime time.Duration, script string) uint64 {
	c.t.Helper()
	resp, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.SubmitJobResponse, error) {
		return longfairv1.NewJobsClient(conn).SubmitJob(ctx, &longfairv1.SubmitJobRequest{
			Account: account, User: user, Name: rid, Demand: demand, Tasks: 1, Nodes: nodes, MaxAttempts: 1,
			Walltime: durationpb.New(walltime), Command: []string{script}, RequestId: rid,
		})
	})
	must(c.t, err, "submit %s", rid)
	return resp.GetJob().GetId()
}

// rankLine is what mpi_hello prints for each rank.
var rankLine = regexp.MustCompile(`(?m)^rank (\d+) of (\d+) on (\S+) pid (\d+)$`)

type rankRun struct {
	rank, size int
	node       string
	pid        int
}

func readRanks(t *testing.T, path string) []rankRun {
	t.Helper()
	b, _ := os.ReadFile(path)
	var out []rankRun
	for _, m := range rankLine.FindAllStringSubmatch(string(b), -1) {
		r, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		p, _ := strconv.Atoi(m[4])
		out = append(out, rankRun{rank: r, size: s, node: m[3], pid: p})
	}
	return out
}

// The first must-show: a 2-node × 2-rank MPI hello on 3 workers
// prints 4 distinct ranks from the task's 2 nodes, and is charged once
// for both nodes — with MPICH (its Hydra launcher starting the ranks on
// the other node through `longfair exec`) and with Open MPI (its orted
// daemons started the same way).
func TestMPIHelloSpansTwoNodes(t *testing.T) {
	for _, m := range []mpi{mpich, openMPI} {
		t.Run(m.name, func(t *testing.T) { testMPIHello(t, m) })
	}
}

func testMPIHello(t *testing.T, m mpi) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startParallelCluster(ctx, t, []string{"w1", "w2", "w3"})
	hello := m.hello(t, c.dir)
	out := filepath.Join(c.dir, "hello.out")
	job := c.submitParallel(ctx, acct, user, "mpi-hello", 2, map[string]float64{"cpu": 2}, time.Minute, m.launcher(hello, out))
	j := c.waitEnded(ctx, job)[0]
	b, _ := os.ReadFile(out)
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
		t.Fatalf("the MPI job ended %v; its output:\n%s", j.GetState(), b)
	}
	tasks := c.tasks(ctx, job)
	if len(tasks) != 1 || len(tasks[0].GetNodes()) != 2 {
		t.Fatalf("tasks %v: want one task on 2 nodes", tasks)
	}
	ranks := readRanks(t, out)
	seen, nodes := map[int]bool{}, map[string]int{}
	for _, r := range ranks {
		if r.size != 4 {
			t.Fatalf("rank %d says the world has %d ranks, want 4:\n%s", r.rank, r.size, b)
		}
		seen[r.rank] = true
		nodes[r.node]++
		if !slices.Contains(tasks[0].GetNodes(), r.node) {
			t.Fatalf("rank %d ran on %s, outside the task's nodes %v", r.rank, r.node, tasks[0].GetNodes())
		}
	}
	if len(seen) != 4 || len(nodes) != 2 {
		t.Fatalf("ranks %v on nodes %v; want 4 distinct ranks from 2 nodes:\n%s", seen, nodes, b)
	}
	if !strings.Contains(string(b), "sum 6\n") {
		t.Fatalf("the ranks did not agree on their sum (0+1+2+3):\n%s", b)
	}
	if n := jobCharges(c.charges(ctx, acct), job); n != 1 {
		t.Fatalf("job %d has %d charges, want 1 for its one task on 2 nodes", job, n)
	}
	t.Logf("ranks by node: %v; charged %d µSU", nodes, j.GetChargedMicroSu())
}

// pidAlive reports whether a process runs (a zombie counts as gone).
func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// jobCharges counts the charge entries of a job's attempts.
func jobCharges(charges map[string][]*longfairv1.JournalEntry, job uint64) int {
	n := 0
	for id, es := range charges {
		if strings.HasPrefix(id, fmt.Sprintf("job-%d.", job)) {
			n += len(es)
		}
	}
	return n
}

// `longfair exec` starts processes only on the nodes of its own parallel
// task, with its credential, while it runs: the right credential works, a
// forged one, a node outside the allocation and a task that has ended are
// refused, each with a reason.
func TestExecIsScopedToItsTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startParallelCluster(ctx, t, []string{"w1", "w2", "w3"})
	envFile := filepath.Join(c.dir, "task.env")
	job := c.submitParallel(ctx, acct, user, "holder", 2, map[string]float64{"cpu": 2}, time.Minute,
		fmt.Sprintf(`env | grep ^LONGFAIR_ > %s.tmp && mv %s.tmp %s; sleep 300`, envFile, envFile, envFile))
	var env []string
	testcluster.WaitFor(ctx, t, "the task to write its environment", func() bool {
		b, err := os.ReadFile(envFile)
		env = strings.Split(strings.TrimSpace(string(b)), "\n")
		return err == nil
	})
	get := func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		t.Fatalf("the task's environment has no %s: %v", name, env)
		return ""
	}
	nodes := strings.Split(get("LONGFAIR_NODELIST"), ",")
	outside := ""
	for _, w := range []string{"w1", "w2", "w3"} {
		if !slices.Contains(nodes, w) {
			outside = w
		}
	}
	run := func(override map[string]string, node string) (string, error) {
		cmd := exec.CommandContext(ctx, binary, "exec", node, "echo", "hello from", "$LONGFAIR_EXEC_NODE")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if _, ok := override[name]; !ok {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		for k, v := range override {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(nil, nodes[1]); err != nil || strings.TrimSpace(out) != "hello from "+nodes[1] {
		t.Fatalf("exec on the task's node %s: %v, %q; want it to run there", nodes[1], err, out)
	}
	forged := strings.Repeat("0", len(get("LONGFAIR_JOB_CREDENTIAL")))
	if out, err := run(map[string]string{"LONGFAIR_JOB_CREDENTIAL": forged}, nodes[1]); err == nil || !strings.Contains(out, "credential is not this task's") {
		t.Fatalf("a forged credential: %v, %q; want it refused", err, out)
	}
	// A node outside the allocation, even with its address given.
	addr := c.nodes(ctx)[outside].GetAddress()
	withOutside := map[string]string{"LONGFAIR_NODE_ADDRESSES": get("LONGFAIR_NODE_ADDRESSES") + "," + outside + "=" + addr}
	if out, err := run(withOutside, outside); err == nil || !strings.Contains(out, "holds no running part") {
		t.Fatalf("exec on %s, outside the task's nodes %v: %v, %q; want it refused", outside, nodes, err, out)
	}
	if out, err := run(nil, outside); err == nil || !strings.Contains(out, "not one of this task's nodes") {
		t.Fatalf("exec on %s without its address: %v, %q; want it refused", outside, err, out)
	}
	_, err := do(ctx, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Job, error) {
		return longfairv1.NewJobsClient(conn).CancelJob(ctx, &longfairv1.CancelJobRequest{JobId: job})
	})
	must(t, err, "cancel job %d", job)
	c.waitEnded(ctx, job)
	testcluster.WaitFor(ctx, t, "exec to be refused after the task ended", func() bool {
		out, err := run(nil, nodes[1])
		return err != nil && strings.Contains(out, "holds no running part")
	})
}

// `longfair run` inside a parallel task starts its --ntasks processes in
// blocks over its nodes, each with its rank; submit's --ntasks and
// --ntasks-per-node shape the job as sbatch's do.
func TestRunStartsRanksAcrossTheTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startParallelCluster(ctx, t, []string{"w1", "w2", "w3"})
	out := filepath.Join(c.dir, "ranks.out")
	cmd := exec.CommandContext(ctx, binary, "submit", "--addr", c.grpcAddrs(), "--account", acct, "--user", user,
		"--ntasks", "4", "--ntasks-per-node", "2", "--walltime", "1m", "--wait", "--",
		fmt.Sprintf(`%s run --label -- 'echo $LONGFAIR_PROCID $LONGFAIR_LOCALID $LONGFAIR_EXEC_NODE $LONGFAIR_NTASKS' > %s`, binary, out))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("submit --ntasks 4 --ntasks-per-node 2: %v\n%s", err, b)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	byRank := map[string][]string{}
	for _, l := range lines {
		label, rest, _ := strings.Cut(l, ": ")
		byRank[label] = strings.Fields(rest)
	}
	if len(byRank) != 4 {
		t.Fatalf("ranks printed %q, want 4", b)
	}
	for r := range 4 {
		f := byRank[fmt.Sprint(r)]
		if len(f) != 4 || f[0] != fmt.Sprint(r) || f[1] != fmt.Sprint(r%2) || f[3] != "4" {
			t.Fatalf("rank %d printed %v, want its rank, local id %d, node and LONGFAIR_NTASKS=4:\n%s", r, f, r%2, b)
		}
	}
	if byRank["0"][2] != byRank["1"][2] || byRank["2"][2] != byRank["3"][2] || byRank["0"][2] == byRank["2"][2] {
		t.Fatalf("ranks on nodes %s %s %s %s: want 0,1 on one node and 2,3 on another", byRank["0"][2], byRank["1"][2], byRank["2"][2], byRank["3"][2])
	}
}

// grpcAddrs is every live server's gRPC address, for a CLI's --addr.
func (c *cluster) grpcAddrs() string {
	var out []string
	for _, s := range c.live() {
		out = append(out, s.GRPC)
	}
	return strings.Join(out, ",")
}
