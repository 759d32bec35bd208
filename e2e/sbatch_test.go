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
)

// TestSbatchRunsAScriptWithDirectives submits a real #SBATCH script with
// an array, a Slurm time limit and a job name through 'longfair sbatch
// --parsable', and checks the printed job id and what each task wrote,
// with the SLURM_* variables it saw.
func TestSbatchRunsAScriptWithDirectives(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startParallelCluster(ctx, t, []string{"w1"})
	script := filepath.Join(c.dir, "job.sh")
	body := fmt.Sprintf(`#!/bin/sh
# a batch script as Slurm users write them
#SBATCH -A %s
#SBATCH --job-name=sbatch-e2e --array=0-2
#SBATCH -t 0:01:00

echo "task $LONGFAIR_TASK_INDEX arg $1 slurm $SLURM_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_JOB_NAME $SLURM_JOB_ACCOUNT $SLURM_NNODES" > %s/out-$LONGFAIR_TASK_INDEX.txt
`, acct, c.dir)
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, binary, "sbatch", "--addr", c.grpcAddrs(), "--user", user, "--parsable", script, "hello").Output()
	if err != nil {
		t.Fatalf("sbatch: %v", err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("sbatch --parsable printed %q, want only the job id", out)
	}
	jobs := c.waitEnded(ctx, id)
	j := jobs[0]
	if j.GetTasks() != 3 || j.GetName() != "sbatch-e2e" || j.GetAccount() != acct || j.GetWalltime().AsDuration() != time.Minute {
		t.Fatalf("job %d: %d tasks, name %q, account %q, walltime %v; want the directives' 3, sbatch-e2e, %s, 1m",
			id, j.GetTasks(), j.GetName(), j.GetAccount(), j.GetWalltime().AsDuration(), acct)
	}
	for i := range 3 {
		b, err := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("out-%d.txt", i)))
		if want := fmt.Sprintf("task %d arg hello slurm %d %d sbatch-e2e %s 1\n", i, id, i, acct); err != nil || string(b) != want {
			t.Errorf("task %d wrote %q (%v), want %q", i, b, err, want)
		}
	}
}
