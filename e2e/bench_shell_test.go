package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// BenchmarkShellSubmit measures what a researcher's shell loop feels
// (issue 15): the wall time of one `longfair submit -- true` to an idle
// 3-server cluster with the client binary (longfair-client, the one for
// login nodes), beside the full binary's in turn (ms/submit-full), and
// the client's jobs per second from one shell and from 8 shells at once.
// Beside them, the floor of any client written in Go here
// (ms/go-floor-p50): an empty Go program's start and exit, plus the same
// submission from a process already connected. Where Debian's slurm-wlm
// is installed it starts a one-node Slurm on loopback beside it
// (scripts/slurm-loopback, which it stops after) and measures `sbatch
// --wrap true` the same way in the same run, reporting the ratios: ≥ 2
// means longfair submits at least twice as fast; x-sbatch-go-floor is
// the most a Go client could reach from one shell.
func BenchmarkShellSubmit(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := startCluster(ctx, b, 3)
	acct, user := c.account(ctx, "bench")
	env := clientEnv(c)
	submit := func(bin string) func() *exec.Cmd {
		return shellCommand(env, bin, "submit", "--account", acct, "--user", user, "--cpu", "1", "--walltime", "1m", "--", "true")
	}
	full, slim := submit(binary), submit(clientBinary)
	emptyGo := shellCommand(env, buildEmptyGoProgram(b))
	// One call first: a failing command should fail the benchmark, not
	// be timed.
	for _, cmd := range []func() *exec.Cmd{full, slim, emptyGo} {
		if out, err := cmd().CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", cmd(), err, out)
		}
	}
	sbatch := startSlurm(b)

	b.ResetTimer()
	// In turns, so that both see the same load on the machine.
	fullCall, _ := timeCalls(b, b.N, 1, full)
	perCall, calls := timeCalls(b, b.N, 1, slim)
	all8, _ := timeCalls(b, b.N, 8, slim)
	rate8 := float64(8*b.N) / all8.Seconds()
	_, goCalls := timeCalls(b, b.N, 1, emptyGo)
	warm := submitWarm(ctx, b, c, acct, user, b.N)
	b.StopTimer()
	// The floor of any client written in Go, on this machine: starting a
	// Go program that does nothing, plus the same submission from a
	// process already running and connected. A shell's call can take no
	// less; the goal of 2× sbatch needs it under half of sbatch's call.
	floor := median(goCalls) + median(warm)
	b.ReportMetric(ms(median(goCalls)), "ms/empty-go-p50")
	b.ReportMetric(ms(median(warm)), "ms/submit-warm-p50")
	b.ReportMetric(ms(floor), "ms/go-floor-p50")
	b.ReportMetric(float64(fullCall.Microseconds())/1000/float64(b.N), "ms/submit-full")
	b.ReportMetric(float64(perCall.Microseconds())/1000/float64(b.N), "ms/submit")
	// The median is what a call usually takes: a shared machine's pauses
	// move the mean by a third from one run to the next.
	b.ReportMetric(ms(median(calls)), "ms/submit-p50")
	b.ReportMetric(float64(b.N)/perCall.Seconds(), "jobs/s-1shell")
	b.ReportMetric(rate8, "jobs/s-8shells")
	if sbatch == nil {
		return
	}
	slurm1, slurmCalls := timeCalls(b, b.N, 1, sbatch)
	slurmAll8, _ := timeCalls(b, b.N, 8, sbatch)
	slurm8 := float64(8*b.N) / slurmAll8.Seconds()
	b.ReportMetric(float64(slurm1.Microseconds())/1000/float64(b.N), "ms/sbatch")
	b.ReportMetric(ms(median(slurmCalls)), "ms/sbatch-p50")
	b.ReportMetric(slurm1.Seconds()/perCall.Seconds(), "x-sbatch-1shell")
	b.ReportMetric(rate8/slurm8, "x-sbatch-8shells")
	b.ReportMetric(float64(median(slurmCalls))/float64(floor), "x-sbatch-go-floor")
}

// buildEmptyGoProgram builds `func main() {}` as the client binary is
// built (statically linked) and returns its path.
func buildEmptyGoProgram(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module empty\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "empty")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build an empty Go program: %v\n%s", err, out)
	}
	return bin
}

// submitWarm submits n one-task jobs of `true` one at a time, as the
// client binary's submit does, from this process over one client kept
// open, and returns each call's time.
func submitWarm(ctx context.Context, b *testing.B, c *cluster, account, user string, n int) []time.Duration {
	b.Helper()
	cl := newClient(b, grpcAddrs(c.live()...))
	calls := make([]time.Duration, 0, n)
	for i := range n + 1 {
		req := &longfairv1.SubmitJobRequest{
			Account: account, User: user, Tasks: 1, Demand: map[string]float64{"cpu": 1},
			Walltime: durationpb.New(time.Minute), Command: []string{"true"},
		}
		t := time.Now()
		if _, err := cl.Jobs().SubmitJob(ctx, req); err != nil {
			b.Fatalf("submit from this process: %v", err)
		}
		if i > 0 { // the first call also connects
			calls = append(calls, time.Since(t))
		}
	}
	return calls
}

// BenchmarkShellListings measures the listings researchers run from shell
// loops and scripts, with the client binary against an idle 3-server
// cluster holding LONGFAIR_BENCH_JOBS (default 650) held one-task jobs:
// the median wall time of `jobs` (the newest 50), `jobs --output json`,
// `squeue` (every pending job; the reasons of the first 200 asked of
// the scheduler) and `sacct` (every job with its tasks).
func BenchmarkShellListings(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := startCluster(ctx, b, 3)
	acct, user := c.account(ctx, "bench")
	jobs := envInt(b, "LONGFAIR_BENCH_JOBS", 650)
	for i := range jobs {
		c.submit(ctx, acct, user, fmt.Sprintf("held-%d", i), 1, map[string]float64{"cpu": 1}, time.Minute, "true",
			func(r *longfairv1.SubmitJobRequest) { r.Hold = true })
	}
	env := clientEnv(c)
	listing := func(args ...string) func() *exec.Cmd { return shellCommand(env, clientBinary, args...) }
	cases := []struct {
		metric string
		cmd    func() *exec.Cmd
	}{
		{"ms/jobs", listing("jobs")},
		{"ms/jobs-json", listing("jobs", "--output", "json")},
		{"ms/squeue", listing("squeue")},
		{"ms/sacct", listing("sacct")},
	}
	for _, k := range cases {
		if out, err := k.cmd().CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", k.cmd(), err, out)
		}
	}
	b.ResetTimer()
	calls := make([][]time.Duration, len(cases))
	for range b.N {
		// In turns, so that each sees the same load on the machine.
		for i, k := range cases {
			_, d := timeCalls(b, 1, 1, k.cmd)
			calls[i] = append(calls[i], d...)
		}
	}
	b.StopTimer()
	for i, k := range cases {
		b.ReportMetric(ms(median(calls[i])), k.metric)
	}
	b.ReportMetric(0, "ns/op")
}

// clientEnv is this process's environment with LONGFAIR_ADDR naming
// every live server of c, as a researcher's shell has it.
func clientEnv(c *cluster) []string {
	return append(os.Environ(), client.EnvAddr+"="+c.grpcAddrs())
}

// shellCommand returns how to run bin with args in env: a new command
// each call, as a shell starts one.
func shellCommand(env []string, bin string, args ...string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		return cmd
	}
}

// timeCalls runs n commands from each of shells goroutines, each waiting
// for its last, and returns the wall time of all and of each call.
func timeCalls(b *testing.B, n, shells int, cmd func() *exec.Cmd) (time.Duration, []time.Duration) {
	start := time.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		calls []time.Duration
	)
	for range shells {
		wg.Go(func() {
			for range n {
				t := time.Now()
				if out, err := cmd().CombinedOutput(); err != nil {
					b.Errorf("%v\n%s", err, out)
					return
				}
				mu.Lock()
				calls = append(calls, time.Since(t))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return time.Since(start), calls
}

// median is the middle of ds (0 for none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// startSlurm starts a one-node Slurm on loopback with scripts/slurm-loopback
// when slurm-wlm is installed, stopped when b ends, and returns how to
// call its sbatch; nil without it.
func startSlurm(b *testing.B) func() *exec.Cmd {
	if _, err := exec.LookPath("slurmctld"); err != nil {
		b.Log("slurm-wlm is not installed: no sbatch figures (scripts/slurm-loopback start installs and starts it)")
		return nil
	}
	script, err := filepath.Abs("../scripts/slurm-loopback")
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "slurm")
	// Stopped even when it did not start all the way: what did start
	// must not outlive the benchmark.
	b.Cleanup(func() {
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			b.Errorf("stop Slurm: %v\n%s", err, out)
		}
	})
	if out, err := exec.Command(script, "start", dir).CombinedOutput(); err != nil {
		b.Fatalf("start Slurm: %v\n%s", err, out)
	}
	env := append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	work := b.TempDir()
	return func() *exec.Cmd {
		cmd := exec.Command("sbatch", "--wrap", "true", "--output", "/dev/null")
		cmd.Env, cmd.Dir = env, work
		return cmd
	}
}
