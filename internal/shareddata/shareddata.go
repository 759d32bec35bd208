// Package shareddata finds the repository's root (ModuleRoot) and the real
// workload traces (Parallel Workloads
// Archive SWF, SWIM, Google 2011) that tests and benchmarks read from
// ../shared/data beside the repository. Traces are never copied into the
// repository; a test that needs one skips, saying why, when it is absent.
package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot is the repository's root: the directory holding go.mod, found
// by walking up from the working directory (a test's package directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Find returns the path of a trace in ../shared/data beside the
// repository.
func Find(name string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("find trace %s: %w", name, err)
	}
	p := filepath.Join(root, "..", "shared", "data", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the shared data folder is absent: %w", err)
	}
	return p, nil
}

// Path is Find for tests that need the trace: they skip, saying why, when
// it is absent.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if err != nil {
		tb.Skipf("trace %s not found: %v", name, err)
	}
	return p
}

// Optional is for tests that also run without the trace: "" when absent.
func Optional(name string) string {
	p, _ := Find(name)
	return p
}
