package sim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// findSharedData returns the path of a trace in ../shared/data beside the
// repository, found by walking up from the test's directory to the one
// holding go.mod. Traces are never copied into the repository.
func findSharedData(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the shared data folder is absent: %w", err)
	}
	return p, nil
}

// sharedData is findSharedData for tests that need the trace: they skip,
// saying why, when it is absent.
func sharedData(t testing.TB, name string) string {
	t.Helper()
	p, err := findSharedData(name)
	if err != nil {
		t.Skipf("trace %s not found: %v", name, err)
	}
	return p
}

// optionalSharedData is for tests that also run without the trace.
func optionalSharedData(name string) string {
	p, _ := findSharedData(name)
	return p
}
