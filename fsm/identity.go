package fsm

import (
	"fmt"
	"slices"
	"strings"
)

// A longfair user is a Unix account: workers running as root start its
// tasks as that account, and servers that verify MUNGE credentials map
// the credential's uid back to the user. By default the account is the
// one named like the user; an admin may name another account
// (UnixIdentity.User) or fix its uid and gid, for sites whose directory
// has no names the cluster could use. The FSM keeps the mapping and
// never resolves it: names are looked up on each node (os/user), where
// the account must exist.

// UnixIdentity is the Unix account a user's tasks run as. The zero value
// is the default: the account named like the user.
type UnixIdentity struct {
	// User is the Unix account's name; "" is the longfair user's own name
	// (unless UID is set, which then names the account by itself).
	User string `json:"unix_user,omitempty"`
	// UID and GID fix the uid and the primary gid; nil takes them from
	// the account on each node.
	UID *uint32 `json:"uid,omitempty"`
	GID *uint32 `json:"gid,omitempty"`
}

// IsZero reports whether the identity is the default.
func (u UnixIdentity) IsZero() bool { return u.User == "" && u.UID == nil && u.GID == nil }

// String shows the identity for people and logs: "ann", "uid 1001",
// "ann uid 1001 gid 100", "default".
func (u UnixIdentity) String() string {
	var parts []string
	if u.User != "" {
		parts = append(parts, u.User)
	}
	if u.UID != nil {
		parts = append(parts, fmt.Sprintf("uid %d", *u.UID))
	}
	if u.GID != nil {
		parts = append(parts, fmt.Sprintf("gid %d", *u.GID))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, " ")
}

func (u UnixIdentity) clone() UnixIdentity {
	return UnixIdentity{User: u.User, UID: cloneID(u.UID), GID: cloneID(u.GID)}
}

func cloneID(p *uint32) *uint32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// maxUnixNameLength is the longest Unix account name accepted; useradd's
// limit on Debian is 32.
const maxUnixNameLength = 32

// checkUnixName refuses what no Unix account is named: empty, too long, or
// other than letters, digits, '.', '_' and '-' (not first), with an
// optional trailing '$' (Samba's machine accounts).
func checkUnixName(field, name string) *Error {
	if name == "" || len(name) > maxUnixNameLength {
		return invalid("%s %q must be 1 to %d characters", field, name, maxUnixNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' ||
			i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-' || c == '$' && i == len(name)-1)
		if !ok {
			return invalid("%s %q is not a Unix account name: use letters, digits, '.', '_' and '-', starting with a letter or '_'", field, name)
		}
	}
	return nil
}

// validate checks an identity an admin sets: tasks never run as root, so
// uid 0, gid 0 and the account named root are refused.
func (u UnixIdentity) validate() *Error {
	if u.User != "" {
		if err := checkUnixName("unix user", u.User); err != nil {
			return err
		}
		if u.User == "root" {
			return invalid("unix user root is uid 0: tasks never run as root; map the user to its own Unix account")
		}
	}
	if u.UID != nil && *u.UID == 0 {
		return invalid("uid 0 is root: tasks never run as root; give the user's own uid")
	}
	if u.GID != nil && *u.GID == 0 {
		return invalid("gid 0 is root's group: tasks never run with it; give the user's own group")
	}
	return nil
}

// SetUserUnix sets (or, with Clear, resets to the default) the Unix
// account a user's tasks run as.
type SetUserUnix struct {
	User  string       `json:"user"`
	Unix  UnixIdentity `json:"unix"`
	Clear bool         `json:"clear,omitempty"`
}

func (*SetUserUnix) Type() CommandType { return TypeSetUserUnix }

func (c *SetUserUnix) validate(r rules) *Error {
	if err := checkName("user name", c.User); err != nil {
		return err
	}
	if c.Clear && !c.Unix.IsZero() {
		return invalid("the Unix account is both set and cleared: do one or the other")
	}
	if !c.Clear && c.Unix.IsZero() {
		return invalid("nothing to set: give a Unix user name, a uid or a gid, or clear the mapping")
	}
	return c.Unix.validate()
}

// setUserUnix applies SetUserUnix; the result is a UserInfo. Two users
// may not claim the same uid or the same Unix name, so that a MUNGE
// credential maps to one user.
func (b *batch) setUserUnix(c *SetUserUnix) (any, error) {
	st := b.st
	old, ok := st.users[c.User]
	if !ok {
		return nil, notFound("user %q does not exist: check the name, or create the user first", c.User)
	}
	for _, name := range sortedKeys(st.users) {
		o := st.users[name]
		if name == c.User {
			continue
		}
		if c.Unix.UID != nil && o.Unix.UID != nil && *o.Unix.UID == *c.Unix.UID {
			return nil, refuse(KindExists, "uid %d is already user %q's: one Unix account is one longfair user", *c.Unix.UID, name)
		}
		if c.Unix.User != "" && o.unixName() == c.Unix.User {
			return nil, refuse(KindExists, "Unix account %q is already user %q's: one Unix account is one longfair user", c.Unix.User, name)
		}
	}
	u := *old
	u.Unix = c.Unix.clone()
	if err := putJSON(b.bucket(bucketUsers), []byte(u.Name), &u); err != nil {
		return nil, err
	}
	st.users[u.Name] = &u
	return userInfo(&u), nil
}

// unixName is the Unix account name the user maps to by name: the one
// set, else its own name unless a uid alone names the account.
func (u *userRecord) unixName() string {
	switch {
	case u.Unix.User != "":
		return u.Unix.User
	case u.Unix.UID != nil:
		return ""
	}
	return u.Name
}

// runAs is the identity a job of user u runs as, as the job records it:
// the account name is always filled in unless a uid alone names it.
func (u *userRecord) runAs() UnixIdentity {
	id := u.Unix.clone()
	if id.User == "" && id.UID == nil {
		id.User = u.Name
	}
	return id
}

// checkRunAs refuses a job whose user maps to root where the servers can
// tell: by name, or by uid or gid 0 (which SetUserUnix refuses already).
func checkRunAs(user string, id UnixIdentity) *Error {
	if id.User == "root" || id.UID != nil && *id.UID == 0 || id.GID != nil && *id.GID == 0 {
		return refuse(KindPermission, "user %q maps to the Unix account root: tasks never run as root; ask an admin to map the user to its own account ('longfair user set %s --unix-user NAME')", user, user)
	}
	return nil
}

// UserByUnix returns the user a Unix account (uid, and name as the
// server's node resolved it, "" when it has none) maps to: the user given
// that uid, else the one given that name, else the user of that name that
// has no mapping of its own.
func (f *FSM) UserByUnix(uid uint32, name string) (UserInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var byName, own *userRecord
	for _, u := range f.st.users {
		switch {
		case u.Unix.UID != nil && *u.Unix.UID == uid:
			return userInfo(u), true
		case name != "" && u.Unix.User == name:
			byName = u
		case name != "" && u.Name == name && u.Unix.User == "" && u.Unix.UID == nil:
			own = u
		}
	}
	switch {
	case byName != nil:
		return userInfo(byName), true
	case own != nil:
		return userInfo(own), true
	}
	return UserInfo{}, false
}

// Limits on what a job captures at submission.
const (
	MaxDirBytes = 4096 // PATH_MAX
	MaxEnvVars  = 4096
	MaxEnvBytes = 1 << 20
)

// checkLaunch checks the working directory and environment a job
// captured: an absolute path, and NAME=value pairs with distinct names,
// neither holding NUL, both within bounds. Values may hold newlines (bash
// exports functions that way).
func checkLaunch(r rules, dir string, env []string) *Error {
	if dir != "" {
		if !strings.HasPrefix(dir, "/") {
			return invalid("working directory %q is not an absolute path: give one starting with /", dir)
		}
		if err := r.text("working directory", dir, MaxDirBytes); err != nil {
			return err
		}
	}
	if len(env) > MaxEnvVars {
		return invalid("environment has %d variables: at most %d; export fewer (--export=NAME,...)", len(env), MaxEnvVars)
	}
	size := 0
	seen := make(map[string]bool, len(env))
	for _, kv := range env {
		size += len(kv)
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return invalid("environment entry %.40q is not NAME=value", kv)
		}
		if err := r.commandText("environment variable "+name, kv, MaxEnvBytes); err != nil {
			return err
		}
		if seen[name] {
			return invalid("environment variable %.40q is given twice: give each once", name)
		}
		seen[name] = true
	}
	if size > MaxEnvBytes {
		return invalid("environment is %d bytes: at most %d; export fewer variables (--export=NAME,...)", size, MaxEnvBytes)
	}
	return nil
}

// sameLaunch reports whether a retried submission captured what job j did.
func sameLaunch(j *jobRecord, c *SubmitJob) bool {
	return j.Dir == c.Dir && j.EnvCaptured == c.EnvCaptured && slices.Equal(j.Env, c.Env)
}

// jobRunAs is the identity a job's record holds, for JobInfo.
func jobRunAs(j *jobRecord) UnixIdentity {
	if j.RunAs == nil {
		// Jobs submitted before identities existed: the default.
		return UnixIdentity{User: j.User}
	}
	return j.RunAs.clone()
}
