package testcluster

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// StartMunged starts a munged of the test's own, as Slurm's and Flux's
// tests do: its own key, socket, pid, seed and log files in a temporary
// directory, stopped at cleanup. It returns the socket. It skips the test
// where munged is not installed ('make tools' installs it) or cannot run
// (it needs root to own its files as here).
func StartMunged(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("munged"); err != nil {
		tb.Skip("needs munged (Debian package munge; 'make tools' installs it)")
	}
	if os.Geteuid() != 0 {
		tb.Skip("needs root to run a munged of its own")
	}
	dir, err := os.MkdirTemp("", "munged-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	// The socket's directory must be reachable by every user (munged
	// checks), the key readable by munged alone.
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		tb.Fatal(err)
	}
	keyFile := filepath.Join(dir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		tb.Fatal(err)
	}
	socket := filepath.Join(dir, "munge.socket")
	var out bytes.Buffer
	cmd := exec.Command("munged", "--foreground", "--force", "--socket="+socket, "--key-file="+keyFile,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"),
		"--log-file="+filepath.Join(dir, "munged.log"))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = diesWithTest(false)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start munged: %v", err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := exec.Command("munge", "--no-input", "--socket="+socket).Run(); err == nil {
			return socket
		}
		if time.Now().After(deadline) {
			tb.Fatalf("munged did not answer on %s: %s", socket, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// UnixUser creates a real Unix account for the test (useradd) and removes
// it at cleanup; it skips the test unless it runs as root with useradd
// and userdel installed.
func UnixUser(tb testing.TB, name string) *user.User {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root to create Unix users")
	}
	for _, tool := range []string{"useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Skipf("needs %s to create Unix users (Debian package passwd)", tool)
		}
	}
	_ = exec.Command("userdel", "-r", name).Run() // a leftover of a killed run
	if out, err := exec.Command("useradd", "--create-home", "--user-group", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
		tb.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	tb.Cleanup(func() { _ = exec.Command("userdel", "-r", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// MungeAs makes a MUNGE credential as Unix user name (runuser), with
// munge's extra flags (e.g. "--ttl=1").
func MungeAs(tb testing.TB, socket, name string, flags ...string) string {
	tb.Helper()
	args := append([]string{"-u", name, "--", "munge", "--no-input", "--socket=" + socket}, flags...)
	out, err := exec.Command("runuser", args...).Output()
	if err != nil {
		tb.Fatalf("munge as %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
