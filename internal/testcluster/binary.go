package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/longfair/longfair/internal/shareddata"
)

// Build builds the longfair binary (this module's cmd/longfair) into dir
// and returns its path, for tests that run real processes.
func Build(dir string) (string, error) { return BuildCommand(dir, "longfair") }

// BuildTags are the build tags of the binaries `make build` makes (the
// Makefile's GOTAGS), so that tests run and time what users install.
const BuildTags = "grpcnotrace"

// BuildCommand builds this module's cmd/NAME into dir and returns its
// path: longfair, or longfair-client (the user commands alone).
func BuildCommand(dir, name string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is not on PATH; cannot build the %s binary: %w", name, err)
	}
	root, err := shareddata.ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	build := exec.Command(goBin, "build", "-tags", BuildTags, "-o", bin, "./cmd/"+name)
	build.Dir = root
	if name == "longfair-client" {
		// Linked statically, as make build links it (Makefile).
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
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
