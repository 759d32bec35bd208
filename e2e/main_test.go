package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/worker"
)

// binary is the longfair binary TestMain built for this run, and
// clientBinary the user commands alone (cmd/longfair-client), which the
// Slurm shell links as sbatch, scancel, sacct and squeue, as deploy/ says.
var binary, clientBinary string

func TestMain(m *testing.M) {
	worker.Supervise() // in-process benchmarks run worker agents
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "longfair-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = testcluster.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "build longfair:", err)
		return 1
	}
	if clientBinary, err = testcluster.BuildCommand(dir, "longfair-client"); err != nil {
		fmt.Fprintln(os.Stderr, "build longfair-client:", err)
		return 1
	}
	return m.Run()
}
