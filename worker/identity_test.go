package worker

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// unixUser creates a real Unix account for the test (useradd) and
// removes it afterwards. It skips the test where that cannot be done.
func unixUser(t *testing.T, name string) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates Unix users and runs tasks as them")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("needs useradd to create Unix users")
	}
	_ = exec.Command("userdel", "-r", name).Run() // a leftover of a killed run
	if out, err := exec.Command("useradd", "--create-home", "--user-group", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", "-r", name).CombinedOutput(); err != nil {
			t.Logf("userdel %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A root worker runs a task as its user: that uid, gid and groups, HOME,
// USER and LOGNAME, in the job's directory with the job's environment;
// the task cannot write another user's files nor read the worker's
// token, and its output files are its user's.
func TestTaskRunsAsItsUnixUser(t *testing.T) {
	ann := unixUser(t, "lftest-ann")
	bob := unixUser(t, "lftest-bob")
	// The work dir must be traversable for the researcher to reach the
	// output files; the token beside it stays the worker's alone.
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o711); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(work, "worker.token")
	if err := os.WriteFile(token, []byte("secret-worker-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bobFile := filepath.Join(bob.HomeDir, "mine")
	if err := os.WriteFile(bobFile, []byte("bob's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(bob.Uid)
	gid, _ := strconv.Atoi(bob.Gid)
	if err := os.Chown(bobFile, uid, gid); err != nil {
		t.Fatal(err)
	}

	ag := newTestAgent(t, func(c *Config) { c.WorkDir, c.RunAsUsers = work, true })
	script := `id -u; id -g; echo "home=$HOME user=$USER logname=$LOGNAME foo=$FOO job=$LONGFAIR_JOB_ID"; pwd
echo overwritten > ` + bobFile + ` 2>/dev/null && echo wrote-bob || echo cannot-write-bob
cat ` + token + ` 2>/dev/null && echo read-token || echo cannot-read-token`
	a := asg(21, 0, 1, script, time.Minute, map[string]float64{"cpu": 1})
	a.User = "ann"
	a.RunAs = &longfairv1.UnixIdentity{UnixUser: ann.Username}
	a.Dir, a.Env, a.EnvCaptured = ann.HomeDir, []string{"FOO=bar", "HOME=/wrong"}, true
	ag.assign(a)
	if e := waitEvent(t, ag, 21, 0, 1, exited); e.GetExitCode() != 0 {
		t.Fatalf("exit code %d; stderr %q", e.GetExitCode(), readOutput(t, ag, attemptKey{21, 0, 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDERR))
	}
	k := attemptKey{21, 0, 1}
	got := strings.Split(strings.TrimSpace(readOutput(t, ag, k, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT)), "\n")
	want := []string{ann.Uid, ann.Gid,
		"home=" + ann.HomeDir + " user=" + ann.Username + " logname=" + ann.Username + " foo=bar job=21",
		ann.HomeDir, "cannot-write-bob", "cannot-read-token"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the task printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b, _ := os.ReadFile(bobFile); string(b) != "bob's\n" {
		t.Fatalf("bob's file became %q", b)
	}
	// The researcher reads the output where it lies.
	out := outputPath(work, k, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT)
	if b, err := exec.Command("runuser", "-u", ann.Username, "--", "cat", out).CombinedOutput(); err != nil || !strings.HasPrefix(string(b), ann.Uid+"\n") {
		t.Fatalf("%s cannot read its output %s: %v: %s", ann.Username, out, err, b)
	}
	if b, err := exec.Command("runuser", "-u", bob.Username, "--", "cat", out).CombinedOutput(); err == nil {
		t.Fatalf("%s read %s's output: %s", bob.Username, ann.Username, b)
	}
}

// A user without a Unix account here, or one that is root, is refused
// before anything runs, with the reason in the attempt's stderr.
func TestTaskRefusedWithoutAccountOrAsRoot(t *testing.T) {
	unixUser(t, "lftest-cat") // skips unless root
	zero := uint32(0)
	marker := filepath.Join(t.TempDir(), "ran")
	for i, tc := range []struct {
		runAs *longfairv1.UnixIdentity
		user  string
		why   string
	}{
		{nil, "lftest-nobody-here", `no Unix account "lftest-nobody-here"`},
		{&longfairv1.UnixIdentity{UnixUser: "root"}, "ann", "which is root"},
		{&longfairv1.UnixIdentity{Uid: &zero}, "ann", "which is root"},
	} {
		ag := newTestAgent(t, func(c *Config) { c.RunAsUsers = true })
		a := asg(30, int64(i), 1, "touch "+marker, time.Minute, map[string]float64{"cpu": 1})
		a.User, a.RunAs = tc.user, tc.runAs
		ag.assign(a)
		e := waitEvent(t, ag, 30, int64(i), 1, exited)
		if e.GetExitCode() != exitRefused {
			t.Errorf("%s as %v: exit code %d, want %d", tc.user, tc.runAs, e.GetExitCode(), exitRefused)
		}
		if why := readOutput(t, ag, attemptKey{30, int64(i), 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDERR); !strings.Contains(why, tc.why) {
			t.Errorf("%s as %v: stderr %q, want it to say %q", tc.user, tc.runAs, why, tc.why)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s as %v: the task ran", tc.user, tc.runAs)
		}
	}
}

// A worker that does not run as users runs a task as itself, in the
// job's directory with the job's environment.
func TestTaskRunsAsWorkerWhenNotSwitching(t *testing.T) {
	dir := t.TempDir()
	ag := newTestAgent(t, nil)
	a := asg(40, 0, 1, `id -u; pwd; echo "foo=$FOO home=${HOME-unset}"`, time.Minute, map[string]float64{"cpu": 1})
	a.Dir, a.Env, a.EnvCaptured = dir, []string{"FOO=1"}, true
	ag.assign(a)
	if e := waitEvent(t, ag, 40, 0, 1, exited); e.GetExitCode() != 0 {
		t.Fatalf("exit code %d", e.GetExitCode())
	}
	got := readOutput(t, ag, attemptKey{40, 0, 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT)
	real, _ := filepath.EvalSymlinks(dir)
	if want := strconv.Itoa(os.Geteuid()) + "\n" + real + "\nfoo=1 home=unset\n"; got != want && got != strings.Replace(want, real, dir, 1) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
