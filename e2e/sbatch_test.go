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

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// A Slurm batch script, unchanged, on real workers: its #SBATCH array
// with a list of indexes and a throttle, its -o pattern and its account;
// each task sees the SLURM_* variables and the script's arguments, and
// writes to its own file; --parsable prints the id alone.
func TestSbatchScriptOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, acct, user := startOneWorker(ctx, t, "phys")
	dir := t.TempDir()
	script := filepath.Join(dir, "sweep.sh")
	body := fmt.Sprintf(`#!/bin/bash
#SBATCH -A %s
#SBATCH --job-name=sweep -t 5   # five minutes
#SBATCH --array=1,3,5%%2 -o out-%%A_%%a.txt
#SBATCH -c 1 --mem=64M
echo "job=$SLURM_JOB_ID index=$SLURM_ARRAY_TASK_ID count=$SLURM_ARRAY_TASK_COUNT name=$SLURM_JOB_NAME dir=$SLURM_SUBMIT_DIR arg=$1 shell=$BASH_VERSION"
`, acct)
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, binary, "sbatch", "--parsable", script, "first arg")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.live()[0].GRPC, "LONGFAIR_USER="+user)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("longfair sbatch: %v\n%s", err, out)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("longfair sbatch --parsable printed %q, not a job id", out)
	}
	j := c.waitEnded(ctx, id)[0]
	if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED || j.GetTasks() != 3 || j.GetArrayThrottle() != 2 || j.GetName() != "sweep" {
		t.Fatalf("the batch job: %v, %d tasks, throttle %d, name %q", j.GetState(), j.GetTasks(), j.GetArrayThrottle(), j.GetName())
	}
	for _, index := range []int{1, 3, 5} {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d_%d.txt", id, index)))
		if err != nil {
			t.Fatalf("array index %d wrote no output file: %v", index, err)
		}
		want := fmt.Sprintf("job=%d index=%d count=3 name=sweep dir=%s arg=first arg shell=", id, index, dir)
		if !strings.HasPrefix(string(b), want) || strings.TrimSpace(strings.TrimPrefix(string(b), want)) == "" {
			t.Errorf("array index %d printed %q; want %q and a bash version (the script's #! interpreter)", index, b, want)
		}
	}
	// A mail option is refused with the reason, and nothing submitted.
	bad := filepath.Join(dir, "mail.sh")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\n#SBATCH -A "+acct+"\n#SBATCH --mail-type=END\ntrue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.CommandContext(ctx, binary, "sbatch", bad)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), client.EnvAddr+"="+c.live()[0].GRPC, "LONGFAIR_USER="+user)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "sends no mail") {
		t.Fatalf("a script asking for mail: %v\n%s", err, out)
	}
}
