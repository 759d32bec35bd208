package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// BenchmarkArrayOnDev runs an array of `true` (10,000 tasks;
// LONGFAIR_BENCH_ARRAY changes it) on `longfair dev` — three servers and
// three workers, each its own process, as a user tries longfair — from
// the submission to the end of its last task, as the servers recorded
// them. Beside it, in the same run, what the machine can do at all: as
// many `/bin/sh -c true` as the array, started directly with the cluster's
// slots (12) at once (x-bare is the ratio; issue 15's goal is ≥ 0.8).
// Where Debian's slurm-wlm is installed it starts a one-node Slurm on
// loopback with the same number of CPUs (scripts/slurm-loopback) and runs
// `sbatch --array --wrap true` (2,000 tasks; LONGFAIR_BENCH_SLURM_ARRAY)
// to its end; x-slurm compares the tasks per second (goal ≥ 20).
// LONGFAIR_BENCH_DEV_ARGS adds flags to `longfair dev` (--look-ahead).
// The ms-cpu metrics split the CPU time the array took, per task, between
// the servers, the workers, their task supervisors and the tasks.
func BenchmarkArrayOnDev(b *testing.B) {
	tasks := envInt(b, "LONGFAIR_BENCH_ARRAY", 10_000)
	slurmTasks := envInt(b, "LONGFAIR_BENCH_SLURM_ARRAY", 2_000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir := b.TempDir()
	dev, err := testcluster.StartDev(binary, filepath.Join(dir, "cluster"), filepath.Join(dir, "dev.out"), strings.Fields(os.Getenv("LONGFAIR_BENCH_DEV_ARGS"))...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := dev.Interrupt(30 * time.Second); err != nil {
			b.Error(err)
		}
	}()
	c, err := client.New(strings.Split(dev.Getenv("LONGFAIR_ADDR"), ","), client.WithToken(dev.Getenv("LONGFAIR_TOKEN")))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	nodes, err := c.Operator().ListNodes(ctx, &longfairv1.ListNodesRequest{})
	if err != nil {
		b.Fatal(err)
	}
	slots := 0
	for _, n := range nodes.GetNodes() {
		slots += int(n.GetCapacity()["cpu"])
	}
	if slots == 0 {
		b.Fatalf("the dev cluster has no cpu slots: %v", nodes)
	}

	commitIndex := func() uint64 {
		st, err := c.Operator().GetRaftStatus(ctx, &longfairv1.GetRaftStatusRequest{})
		if err != nil {
			b.Fatal(err)
		}
		return st.GetCommitIndex()
	}
	b.ResetTimer()
	var span time.Duration
	first := commitIndex()
	cpu0 := readDevCPU(b, dev.Dir)
	for i := range b.N {
		resp, err := c.Jobs().SubmitJob(ctx, &longfairv1.SubmitJobRequest{
			Account: dev.Getenv("LONGFAIR_ACCOUNT"), User: dev.Getenv("LONGFAIR_USER"), Name: fmt.Sprintf("array-%d", i),
			Tasks: int64(tasks), Demand: map[string]float64{"cpu": 1}, Walltime: durationpb.New(5 * time.Minute), Command: []string{"true"},
		})
		if err != nil {
			b.Fatal(err)
		}
		j := waitJobEnded(ctx, b, c, resp.GetJob().GetId())
		if j.GetSucceededTasks() != int64(tasks) {
			b.Fatalf("the array ended with %d of %d tasks succeeded: %v", j.GetSucceededTasks(), tasks, j)
		}
		span += j.GetEndedAt().AsTime().Sub(j.GetSubmittedAt().AsTime())
	}
	b.StopTimer()
	cpu := readDevCPU(b, dev.Dir)
	entries := commitIndex() - first
	rate := float64(b.N*tasks) / span.Seconds()
	bare := bareExecRate(b, tasks, slots)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(slots), "slots")
	b.ReportMetric(rate, "tasks/s")
	b.ReportMetric(bare, "bare-exec/s")
	b.ReportMetric(rate/bare, "x-bare")
	// Raft entries per task, the array's submission and anything the
	// cluster committed meanwhile (node renewals) included.
	b.ReportMetric(float64(entries)/float64(b.N*tasks), "entries/task")
	// Where the machine's time went, per task: the control plane's
	// processes against the tasks' own (their shells, reaped by the
	// supervisors).
	perTask := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N*tasks) }
	b.ReportMetric(perTask(cpu.servers-cpu0.servers), "ms-cpu-servers/task")
	b.ReportMetric(perTask(cpu.workers-cpu0.workers), "ms-cpu-workers/task")
	b.ReportMetric(perTask(cpu.supervisors-cpu0.supervisors), "ms-cpu-supervisors/task")
	b.ReportMetric(perTask(cpu.tasks-cpu0.tasks), "ms-cpu-tasks/task")
	if slurm := slurmArrayRate(ctx, b, slurmTasks, slots); slurm > 0 {
		b.ReportMetric(slurm, "slurm-tasks/s")
		b.ReportMetric(rate/slurm, "x-slurm")
	}
}

// waitJobEnded polls the job until it has ended. Each look costs the
// cluster being measured, hence the pause.
func waitJobEnded(ctx context.Context, b *testing.B, c *client.Client, id uint64) *longfairv1.Job {
	var j *longfairv1.Job
	testcluster.WaitFor(ctx, b, fmt.Sprintf("job %d to end", id), func() bool {
		time.Sleep(100 * time.Millisecond)
		var err error
		if j, err = c.Jobs().GetJob(ctx, &longfairv1.GetJobRequest{JobId: id}); err != nil {
			b.Fatal(err)
		}
		return j.GetEndedAt() != nil
	})
	return j
}

// slurmArrayRate runs an array of n `true` on a one-node Slurm with slots
// CPUs, started on loopback for it, and returns its tasks per second from
// sbatch to the queue being empty; 0 without slurm-wlm.
func slurmArrayRate(ctx context.Context, b *testing.B, n, slots int) float64 {
	b.Setenv("SLURM_CPUS", strconv.Itoa(slots))
	sbatch := startSlurm(b)
	if sbatch == nil {
		return 0
	}
	probe := sbatch()
	start := time.Now()
	cmd := exec.Command("sbatch", "--parsable", "--array", fmt.Sprintf("0-%d", n-1), "--wrap", "true", "--output", "/dev/null")
	cmd.Env, cmd.Dir = probe.Env, probe.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("sbatch: %v\n%s", err, out)
	}
	id := strings.TrimSpace(string(out))
	testcluster.WaitFor(ctx, b, "the Slurm array to end", func() bool {
		time.Sleep(100 * time.Millisecond)
		q := exec.Command("squeue", "-h", "-r", "-j", id, "-o", "%i")
		q.Env = probe.Env
		out, err := q.Output()
		if err != nil {
			b.Fatalf("squeue: %v", err)
		}
		return len(strings.TrimSpace(string(out))) == 0
	})
	return float64(n) / time.Since(start).Seconds()
}
