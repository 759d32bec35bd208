package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/longfair/longfair/worker"
)

// binary is the longfair binary TestMain built for this run.
var binary string

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
	binary = filepath.Join(dir, "longfair")
	build := exec.Command("go", "build", "-o", binary, "./cmd/longfair")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build longfair:", err)
		return 1
	}
	return m.Run()
}

// repoRoot is the directory holding go.mod, above this package.
func repoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
