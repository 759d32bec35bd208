package worker

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// A worker running as root runs each attempt as its user's Unix account:
// the uid, primary gid and supplementary groups of the account the
// assignment names (run_as: a name, or a uid the admin fixed), looked up
// here with os/user, since the account is this node's to know. An account
// this node does not have, or root's, is refused before anything runs:
// the attempt ends with exitRefused and the reason in its stderr. A
// worker that is not root (a laptop, 'longfair dev', the tests) cannot
// switch users and runs every attempt as itself, as it says once when it
// starts.

// exitRefused is the exit code of an attempt this node refused to start
// as its user (as a shell's 126: found, but cannot be run).
const exitRefused = 126

// taskCredential is who a task runs as, sent to its supervisor.
type taskCredential struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// launch is how one attempt is started: as whom, where, with what
// environment (before the variables the agent sets for each attempt).
type launch struct {
	// cred is nil when the task runs as the worker itself.
	cred *taskCredential
	// dir is the job's directory; "" uses the attempt's own directory
	// under the work dir.
	dir string
	env []string
	// home and name are the account's, set as HOME, USER and LOGNAME.
	home, name string
}

// errRefused marks an attempt this node will not run as its user.
var errRefused = errors.New("refused to run the task as its user")

// minimalPath is the PATH of a task that runs as its user with no
// environment captured, instead of the worker's (which may hold secrets).
const minimalPath = "PATH=/usr/local/bin:/usr/bin:/bin"

// launchFor decides how to start attempt asg. asRoot says whether this
// worker can, and so must, switch to the task's user.
func launchFor(asg *longfairv1.Assignment, asRoot bool, workerEnv []string) (launch, error) {
	l := launch{dir: asg.GetDir()}
	if !asRoot {
		l.env = workerEnv
		if asg.GetEnvCaptured() {
			l.env = slices.Clone(asg.GetEnv())
		}
		return l, nil
	}
	acct, err := lookupAccount(asg)
	if err != nil {
		return launch{}, err
	}
	uid, err1 := strconv.ParseUint(acct.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(acct.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return launch{}, fmt.Errorf("%w: Unix account %q has uid %q and gid %q, which are not numbers", errRefused, acct.Username, acct.Uid, acct.Gid)
	}
	if id := asg.GetRunAs(); id != nil && id.Gid != nil {
		gid = uint64(id.GetGid())
	}
	if uid == 0 || gid == 0 {
		return launch{}, fmt.Errorf("%w: user %q maps to Unix account %q (uid %d, gid %d), which is root: tasks never run as root; ask an admin to map the user to its own account", errRefused, asg.GetUser(), acct.Username, uid, gid)
	}
	cred := &taskCredential{UID: uint32(uid), GID: uint32(gid)}
	groups, err := acct.GroupIds()
	if err != nil {
		return launch{}, fmt.Errorf("%w: find the groups of Unix account %q: %v", errRefused, acct.Username, err)
	}
	for _, g := range groups {
		n, err := strconv.ParseUint(g, 10, 32)
		// Never root's group, even if the account is in it.
		if err == nil && n != 0 && !slices.Contains(cred.Groups, uint32(n)) {
			cred.Groups = append(cred.Groups, uint32(n))
		}
	}
	l.cred, l.home, l.name = cred, acct.HomeDir, acct.Username
	if asg.GetEnvCaptured() {
		l.env = slices.Clone(asg.GetEnv())
	} else {
		l.env = []string{minimalPath}
	}
	l.env = setEnv(l.env, "HOME", l.home)
	l.env = setEnv(l.env, "USER", l.name)
	l.env = setEnv(l.env, "LOGNAME", l.name)
	return l, nil
}

// lookupAccount finds the Unix account an assignment runs as on this
// node: by the uid an admin fixed, else by name (the job's user's, by
// default).
func lookupAccount(asg *longfairv1.Assignment) (*user.User, error) {
	id := asg.GetRunAs()
	if id != nil && id.Uid != nil {
		u, err := user.LookupId(strconv.FormatUint(uint64(id.GetUid()), 10))
		if err != nil {
			return nil, fmt.Errorf("%w: user %q is uid %d, which has no Unix account on this node (%v); ask an admin to create it here", errRefused, asg.GetUser(), id.GetUid(), err)
		}
		return u, nil
	}
	name := id.GetUnixUser()
	if name == "" {
		name = asg.GetUser()
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q has no Unix account %q on this node (%v); ask an admin to create it, or to map the user to another ('longfair user set')", errRefused, asg.GetUser(), name, err)
	}
	return u, nil
}

// setEnv sets name in env, replacing an earlier value.
func setEnv(env []string, name, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(env, name+"="+value)
}

// giveTo hands the attempt's files to its user: the output files (so
// the researcher can read them where they lie, as well as through
// 'longfair logs') and, when the job named no directory, the attempt's
// own working directory. Nothing else of the work dir is theirs.
func (l launch) giveTo(paths ...string) error {
	if l.cred == nil {
		return nil
	}
	if len(paths) > 1 {
		// The output tree (work dir/output) is traversable but not
		// listable, so each user reaches its own jobs' directories,
		// which are theirs alone.
		if err := os.Chmod(filepath.Dir(paths[0]), 0o711); err != nil {
			return fmt.Errorf("let users reach their output: %w", err)
		}
	}
	for _, p := range paths {
		if err := os.Lchown(p, int(l.cred.UID), int(l.cred.GID)); err != nil {
			return fmt.Errorf("give %s to uid %d: %w", p, l.cred.UID, err)
		}
	}
	return nil
}

// sys is the credential for SysProcAttr; nil stays nil.
func (c *taskCredential) sys() *syscall.Credential {
	if c == nil {
		return nil
	}
	return &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: slices.Clone(c.Groups)}
}

// refuse ends an attempt this node will not run as its user: the reason
// goes to its stderr, where 'longfair logs' shows it, and it ends with
// exitRefused without having run. It is not lost: another node would
// refuse it the same way as long as the account is missing.
func (ag *Agent) refuse(a *attempt, why error) {
	k := a.key
	ag.log.Error("refused to run a task as its user", "job", k.job, "task", k.task, "attempt", k.attempt, "user", a.asg.GetUser(), "error", why)
	if stdout, stderr, err := ag.openOutput(k); err == nil {
		fmt.Fprintf(stderr, "longfair worker %s: %v\n", ag.cfg.NodeID, why)
		stdout.Close()
		stderr.Close()
	}
	ag.finish(a, exitRefused, 0, nil)
}
