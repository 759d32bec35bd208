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
	"strings"
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
// repository. In a linked git worktree (git worktree add) the folder is
// looked for beside the main checkout too, since worktrees usually live
// elsewhere (their .git file names the main repository's git directory).
func Find(name string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("find trace %s: %w", name, err)
	}
	p := filepath.Join(root, "..", "shared", "data", name)
	_, err = os.Stat(p)
	if err == nil {
		return p, nil
	}
	if main, ok := mainCheckout(root); ok {
		q := filepath.Join(main, "..", "shared", "data", name)
		if _, err2 := os.Stat(q); err2 == nil {
			return q, nil
		}
	}
	return "", fmt.Errorf("the shared data folder is absent: %w", err)
}

// mainCheckout is the main working tree of the repository whose linked
// worktree is root: root/.git is then a file "gitdir: MAIN/.git/worktrees/NAME".
func mainCheckout(root string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "", false // a directory (the main checkout itself) or none
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = filepath.Clean(strings.TrimSpace(gitdir))
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	// MAIN/.git/worktrees/NAME → MAIN
	wts := filepath.Dir(gitdir)
	if filepath.Base(wts) != "worktrees" {
		return "", false
	}
	return filepath.Dir(filepath.Dir(wts)), true
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
