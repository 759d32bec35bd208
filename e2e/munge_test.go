package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// The real CLI authenticated by MUNGE (issue 13): a server checking
// tokens, with a munged of the test's own; an admin maps a Unix account
// to a longfair user of another name ('longfair user set --unix-user');
// 'longfair submit' run as that Unix account, with no token and no
// --user, is accepted as the mapped user, 'longfair jobs' shows it the
// job, and a worker runs it. 'longfair submit' run as a Unix account
// mapped to no longfair user is refused with the server's reason.
// (Replayed, expired and forged credentials are refused in
// server.TestMungeCredentials, over gRPC.)
func TestMungeCLI(t *testing.T) {
	socket := testcluster.StartMunged(t)
	ann := testcluster.UnixUser(t, "lfe2e-ann")
	stranger := testcluster.UnixUser(t, "lfe2e-stranger")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The binary as the Unix users may run it: TestMain builds it in a
	// directory only root may enter.
	bin := userBinary(t)
	c := startACLServer(ctx, t, "--munge-socket", socket)
	s, dir := c.servers[0], c.dir
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)

	// The admin's side, with the CLI and the bootstrap token.
	adminEnv := []string{"LONGFAIR_ADDR=" + s.GRPC, "LONGFAIR_TOKEN=" + testcluster.BootstrapSecret}
	for _, args := range [][]string{
		{"account", "create", "physics"},
		{"grant", "add", "physics", "1000000"},
		{"user", "create", "ann", "--account", "physics"},
		{"user", "set", "ann", "--unix-user", ann.Username},
	} {
		if out, err := runCLI(ctx, bin, nil, adminEnv, "", args...); err != nil {
			t.Fatalf("longfair %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// A worker with a token of its own, running tasks as itself.
	wtok, err := longfairv1.NewACLClient(c.conn(s.GRPC)).CreateToken(admin, &longfairv1.CreateTokenRequest{
		Role: longfairv1.TokenRole_TOKEN_ROLE_WORKER, Node: "w1", Description: "worker w1"})
	must(t, err, "create the worker's token")
	wtokFile := filepath.Join(dir, "w1.token")
	must(t, os.WriteFile(wtokFile, []byte(wtok.GetSecret()+"\n"), 0o600), "write the worker's token")
	c.startWorker("w1", "--token-file", wtokFile)

	// ann submits from her home directory as a login shell would: $USER
	// is her Unix name, which is not her longfair name.
	out, err := runCLI(ctx, bin, ann, userEnv(ann, s.GRPC, socket), ann.HomeDir, "submit", "--account", "physics", "--name", "ann-munge", "--", "true")
	if err != nil {
		t.Fatalf("longfair submit as Unix user %s: %v\n%s", ann.Username, err, out)
	}
	m := regexp.MustCompile(`submitted job (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("longfair submit as %s said %q, naming no job", ann.Username, out)
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	job, err := longfairv1.NewJobsClient(c.conn(s.GRPC)).GetJob(admin, &longfairv1.GetJobRequest{JobId: id})
	must(t, err, "get job %d", id)
	if job.GetUser() != "ann" || job.GetAccount() != "physics" || job.GetName() != "ann-munge" {
		t.Fatalf("job %d is of user %q, account %q, name %q; want ann, physics, ann-munge", id, job.GetUser(), job.GetAccount(), job.GetName())
	}

	// ann sees her job with 'longfair jobs'.
	out, err = runCLI(ctx, bin, ann, userEnv(ann, s.GRPC, socket), ann.HomeDir, "jobs", "--output", "csv")
	if err != nil {
		t.Fatalf("longfair jobs as %s: %v\n%s", ann.Username, err, out)
	}
	if !regexp.MustCompile(`(?m)^` + m[1] + `,physics,ann,ann-munge,`).MatchString(out) {
		t.Fatalf("longfair jobs as %s does not list job %d of ann:\n%s", ann.Username, id, out)
	}

	// 'longfair acl whoami' says who the credential is.
	out, err = runCLI(ctx, bin, ann, userEnv(ann, s.GRPC, socket), ann.HomeDir, "acl", "whoami", "--output", "csv")
	if err != nil || !regexp.MustCompile(`(?m)^munge:uid=`+ann.Uid+`,user,ann,`).MatchString(out) {
		t.Fatalf("longfair acl whoami as %s: %v\n%s", ann.Username, err, out)
	}

	// The worker runs it: the submission carried a usable job.
	for _, j := range c.waitEnded(admin, id) {
		if j.GetState() != longfairv1.JobState_JOB_STATE_SUCCEEDED {
			t.Fatalf("job %d ended %v", id, j.GetState())
		}
	}

	// A Unix account no longfair user is, without and with --user.
	before, err := longfairv1.NewJobsClient(c.conn(s.GRPC)).ListJobs(admin, &longfairv1.ListJobsRequest{})
	must(t, err, "list jobs")
	for _, extra := range [][]string{nil, {"--user", "ann"}} {
		args := append([]string{"submit", "--account", "physics"}, extra...)
		args = append(args, "--", "true")
		out, err = runCLI(ctx, bin, stranger, userEnv(stranger, s.GRPC, socket), stranger.HomeDir, args...)
		if err == nil {
			t.Fatalf("longfair %s as unmapped Unix user %s was accepted:\n%s", strings.Join(args, " "), stranger.Username, out)
		}
		t.Logf("longfair %s as %s: %v: %s", strings.Join(args, " "), stranger.Username, err, strings.TrimSpace(out))
		for _, want := range []string{"Unix user " + stranger.Username + " (uid " + stranger.Uid + ") is no longfair user", "longfair user set NAME --unix-user " + stranger.Username} {
			if !strings.Contains(out, want) {
				t.Errorf("longfair %s as %s: %v\n%s\nwant it to say %q", strings.Join(args, " "), stranger.Username, err, out, want)
			}
		}
	}
	after, err := longfairv1.NewJobsClient(c.conn(s.GRPC)).ListJobs(admin, &longfairv1.ListJobsRequest{})
	must(t, err, "list jobs")
	if len(after.GetJobs()) != len(before.GetJobs()) {
		t.Fatalf("the refused submissions made jobs: %d before, %d after", len(before.GetJobs()), len(after.GetJobs()))
	}
}

// userBinary copies the test's longfair binary where every user may run
// it.
func userBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "longfair-e2e-userbin-")
	must(t, err, "make a directory for the binary")
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755), "open the binary's directory")
	src, err := os.Open(binary)
	must(t, err, "open the binary")
	defer src.Close()
	bin := filepath.Join(dir, "longfair")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	must(t, err, "create the binary's copy")
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	must(t, dst.Close(), "write the binary's copy")
	return bin
}

// userEnv is the environment of a login of u that reaches the cluster at
// addr and its node's munged at socket, and holds no token.
func userEnv(u *user.User, addr, socket string) []string {
	return []string{"USER=" + u.Username, "LOGNAME=" + u.Username, "HOME=" + u.HomeDir, "PATH=/usr/local/bin:/usr/bin:/bin",
		"LONGFAIR_ADDR=" + addr, "LONGFAIR_MUNGE_SOCKET=" + socket}
}

// runCLI runs the longfair binary with args and only the environment env,
// as Unix user u (nil: as the test), in dir ("": the test's), and returns
// its stdout and stderr together.
func runCLI(ctx context.Context, bin string, u *user.User, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	if u != nil {
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return "", err
		}
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return "", err
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%w (as %s)", err, who(u))
	}
	return out.String(), err
}

func who(u *user.User) string {
	if u == nil {
		return "the test's user"
	}
	return u.Username
}
