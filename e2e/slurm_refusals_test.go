package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// startACLServer starts one server that enforces tokens, with args added
// to its flags, and waits until its bootstrap token
// (testcluster.BootstrapSecret) works.
func startACLServer(ctx context.Context, t *testing.T, args ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "bootstrap.token")
	must(t, os.WriteFile(tokenFile, []byte(testcluster.BootstrapSecret+"\n"), 0o600), "write the bootstrap token")
	s := testcluster.StartServer(ctx, t, binary, dir, "s1", append([]string{"--log-level", "info", "--bootstrap",
		"--acl=true", "--acl-bootstrap-token", tokenFile}, args...)...)
	c := &cluster{t: t, dir: dir, servers: []*serverProc{{ServerProc: s}}, workers: map[string]*testcluster.Proc{}, conns: map[string]*grpc.ClientConn{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, conn := range c.conns {
			conn.Close()
		}
	})
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	c.leader(admin)
	_, err := do(admin, c, func(ctx context.Context, conn *grpc.ClientConn) (*longfairv1.Token, error) {
		tok, err := longfairv1.NewACLClient(conn).WhoAmI(ctx, &longfairv1.WhoAmIRequest{})
		if status.Code(err) == codes.Unauthenticated { // not applied yet
			err = status.Error(codes.Unavailable, err.Error())
		}
		return tok, err
	})
	must(t, err, "wait for the bootstrap token")
	return c
}

// refused runs a command line that must fail and returns its exit code
// and output.
func (s *slurmShell) refused(ctx context.Context, t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("%s %s was not refused (%v):\n%s", name, strings.Join(args, " "), err, out)
	}
	return exit.ExitCode(), string(out)
}

// Bad input to sbatch, from a user with a token of their own, is refused
// with an error that says what is wrong, and holds nothing: the
// balances and the job list are as they were. A dependency on a job of
// another account, which the user may not see, is refused in the same
// words as one on a job that does not exist.
func TestSbatchRefusesBadInputHoldingNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startACLServer(ctx, t)
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	conn := c.conn(c.servers[0].GRPC)
	secrets := map[string]string{}
	for user, account := range map[string]string{"ann": "phys", "bob": "bio"} {
		_, err := longfairv1.NewAccountsClient(conn).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: account})
		must(t, err, "create account %s", account)
		_, err = longfairv1.NewGrantsClient(conn).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-" + account, Account: account, AmountMicroSu: 1e12})
		must(t, err, "grant to %s", account)
		_, err = longfairv1.NewUsersClient(conn).CreateUser(admin, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{account}})
		must(t, err, "create user %s", user)
		tok, err := longfairv1.NewACLClient(conn).CreateToken(admin, &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_USER, User: user, Description: "test " + user})
		must(t, err, "create %s's token", user)
		secrets[user] = tok.GetSecret()
	}
	shell := func(user, account string) *slurmShell {
		sh := newSlurmShell(t, c, account, user)
		sh.env = append(sh.env, "LONGFAIR_TOKEN="+secrets[user])
		return sh
	}
	ann, bob := shell("ann", "phys"), shell("bob", "bio")
	for _, sh := range []*slurmShell{ann, bob} {
		must(t, os.WriteFile(filepath.Join(sh.dir, "ok.sh"), []byte("#!/bin/sh\n#SBATCH --time=5\ntrue\n"), 0o755), "write ok.sh")
	}
	// bob's job, held so that it stays: ann may not see it; and one of
	// ann's.
	bobs := batchID(t, bob.run(ctx, t, "sbatch", "--parsable", "--hold", "ok.sh"))
	anns := batchID(t, ann.run(ctx, t, "sbatch", "--parsable", "--hold", "ok.sh"))
	if _, err := longfairv1.NewJobsClient(conn).GetJob(testcluster.As(ctx, secrets["ann"]), &longfairv1.GetJobRequest{JobId: bobs}); err == nil {
		t.Fatalf("ann reads bob's job %d", bobs)
	}
	// Nor do sacct and squeue show it to her: the server lists a user's
	// own accounts' jobs alone, and -j on bob's job is refused.
	for _, cmd := range [][]string{{"sacct", "-n", "-P", "-S", "now-1hour", "--format", "JobID"}, {"squeue", "-h", "-o", "%i"}} {
		if got := strings.TrimSpace(ann.run(ctx, t, cmd[0], cmd[1:]...)); got != fmt.Sprint(anns) {
			t.Errorf("ann's %s printed %q, want her job %d alone", strings.Join(cmd, " "), got, anns)
		}
	}
	if _, out := ann.refused(ctx, t, "sacct", "-P", "-j", fmt.Sprint(bobs), "--format", "JobID,Account"); strings.Contains(out, fmt.Sprintf("%d|", bobs)) {
		t.Errorf("ann's sacct -j %d shows bob's job:\n%s", bobs, out)
	}

	// What a refusal must leave as it was.
	state := func() string {
		var b strings.Builder
		for _, account := range []string{"phys", "bio"} {
			bal, err := longfairv1.NewLedgerClient(conn).GetBalance(consistent(admin), &longfairv1.GetBalanceRequest{Account: account})
			must(t, err, "balance of %s", account)
			fmt.Fprintf(&b, "%s: granted %d held %d charged %d available %d\n", account,
				bal.GetGrantedMicroSu(), bal.GetHeldMicroSu(), bal.GetChargedMicroSu(), bal.GetAvailableMicroSu())
		}
		jobs, err := longfairv1.NewJobsClient(conn).ListJobs(consistent(admin), &longfairv1.ListJobsRequest{PageSize: 1000})
		must(t, err, "list jobs")
		for _, j := range jobs.GetJobs() {
			fmt.Fprintf(&b, "job %d %s %s %v dependency %q\n", j.GetId(), j.GetAccount(), j.GetUser(), j.GetState(), j.GetDependency())
		}
		return b.String()
	}
	before := state()
	if !strings.Contains(before, fmt.Sprintf("job %d bio bob", bobs)) || !strings.Contains(before, fmt.Sprintf("job %d phys ann", anns)) {
		t.Fatalf("the state before the refusals:\n%s", before)
	}
	check := func(what string, code int, out string, wantCode int, want ...string) {
		t.Helper()
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d:\n%s", what, code, wantCode, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the error does not say %q:\n%s", what, w, out)
			}
		}
		if after := state(); after != before {
			t.Fatalf("%s changed the balances or the jobs:\n%s\nnow:\n%s", what, before, after)
		}
	}

	// A bad directive: its line.
	must(t, os.WriteFile(filepath.Join(ann.dir, "bad.sh"), []byte("#!/bin/bash\n#SBATCH --job-name=bad\n#SBATCH --time=10\n#SBATCH --frobnicate=3\necho never\n"), 0o755), "write bad.sh")
	code, out := ann.refused(ctx, t, "sbatch", "bad.sh")
	check("a bad directive", code, out, 2, "line 4", "frobnicate")

	// A malformed time, on the command line and in a directive.
	code, out = ann.refused(ctx, t, "sbatch", "--time=1:2:3:4", "ok.sh")
	check("--time=1:2:3:4", code, out, 2, `--time "1:2:3:4" is not a Slurm time`)
	must(t, os.WriteFile(filepath.Join(ann.dir, "badtime.sh"), []byte("#!/bin/sh\n#SBATCH -t 2-xx\ntrue\n"), 0o755), "write badtime.sh")
	code, out = ann.refused(ctx, t, "sbatch", "badtime.sh")
	check("#SBATCH -t 2-xx", code, out, 2, `--time "2-xx" is not a Slurm time`)

	// An array of one index more than a job may have tasks.
	limit := longfairv1.MaxTasksPerJob
	code, out = ann.refused(ctx, t, "sbatch", fmt.Sprintf("--array=0-%d%%10", limit), "ok.sh")
	check("an array over the maximum", code, out, 2, fmt.Sprintf("more than %d indexes", limit))

	// A dependency on bob's job reads as one on a job that does not
	// exist; the id aside, the two errors are the same.
	unknown := bobs + 1000
	code, onBobs := ann.refused(ctx, t, "sbatch", fmt.Sprintf("--dependency=afterok:%d", bobs), "ok.sh")
	check("a dependency on bob's job", code, onBobs, 1, "does not exist")
	code, onNone := ann.refused(ctx, t, "sbatch", fmt.Sprintf("--dependency=afterok:%d", unknown), "ok.sh")
	check("a dependency on no job", code, onNone, 1, "does not exist")
	anyID := func(out string, id uint64) string {
		return regexp.MustCompile(fmt.Sprintf(`\b%d\b`, id)).ReplaceAllString(out, "N")
	}
	if anyID(onBobs, bobs) != anyID(onNone, unknown) {
		t.Errorf("a dependency on bob's job is refused otherwise than one on no job:\n%s\n%s", onBobs, onNone)
	}
	code, out = ann.refused(ctx, t, "sbatch", fmt.Sprintf("--dependency=afterany:%d_0", bobs), "ok.sh")
	check("a dependency on an element of bob's job", code, out, 1, "does not exist")
	// Nor may ann give her own job that dependency afterwards.
	update := func(dep string) (int, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, binary, "update", fmt.Sprint(anns), "--dependency", dep)
		cmd.Dir, cmd.Env = ann.dir, ann.env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("longfair update --dependency %s was not refused (%v):\n%s", dep, err, out)
		}
		return exit.ExitCode(), string(out)
	}
	code, onBobs = update(fmt.Sprintf("afterok:%d", bobs))
	check("an update to a dependency on bob's job", code, onBobs, 1, "does not exist")
	code, onNone = update(fmt.Sprintf("afterok:%d", unknown))
	check("an update to a dependency on no job", code, onNone, 1, "does not exist")
	if anyID(onBobs, bobs) != anyID(onNone, unknown) {
		t.Errorf("an update to a dependency on bob's job is refused otherwise than one on no job:\n%s\n%s", onBobs, onNone)
	}
	// The same dependency is bob's to give.
	mine := batchID(t, bob.run(ctx, t, "sbatch", "--parsable", "--hold", fmt.Sprintf("--dependency=afterok:%d", bobs), "ok.sh"))
	if j := c.job(admin, mine); j.GetDependency() != fmt.Sprintf("afterok:%d", bobs) {
		t.Fatalf("bob's dependent job %d has dependency %q", mine, j.GetDependency())
	}
}
