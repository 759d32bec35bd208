package testcluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/longfair/longfair/internal/shareddata"
)

// Build builds the longfair binary (this module's cmd/longfair) into dir
// and returns its path, for tests that run real processes.
func Build(dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is not on PATH; cannot build the longfair binary: %w", err)
	}
	root, err := shareddata.ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "longfair")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/longfair")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/longfair: %w\n%s", err, out)
	}
	return bin, nil
}

// Binary is Build into the test's temp dir; the test is skipped when the
// go tool is absent.
func Binary(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("the go tool is not on PATH; cannot build the longfair binary")
	}
	bin, err := Build(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}
