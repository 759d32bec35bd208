package fsm

import (
	"strings"
	"testing"
	"time"
)

func u32(x uint32) *uint32 { return &x }

func TestSetUserUnixRefusesRootAndShapes(t *testing.T) {
	for _, c := range []*SetUserUnix{
		{User: "ann", Unix: UnixIdentity{UID: u32(0)}},
		{User: "ann", Unix: UnixIdentity{GID: u32(0)}},
		{User: "ann", Unix: UnixIdentity{User: "root"}},
		{User: "ann", Unix: UnixIdentity{User: "-x"}},
		{User: "ann", Unix: UnixIdentity{User: strings.Repeat("a", 33)}},
		{User: "ann"},
		{User: "ann", Unix: UnixIdentity{User: "ann"}, Clear: true},
	} {
		if _, err := Encode(t0, c); err == nil {
			t.Errorf("%+v was encoded; want refused", c)
		}
	}
}

func TestUnixMappingAndJobCapture(t *testing.T) {
	h := newHarness(t)
	h.setup(1000)
	h.ok(&CreateUser{Name: "bob", Accounts: []string{"phys"}})
	h.ok(&CreateUser{Name: "root", Accounts: []string{"phys"}})
	info := h.ok(&SetUserUnix{User: "bob", Unix: UnixIdentity{User: "rbob", UID: u32(4242), GID: u32(4243)}}).(UserInfo)
	if info.Unix.User != "rbob" || *info.Unix.UID != 4242 || *info.Unix.GID != 4243 {
		t.Fatalf("bob's identity %+v", info.Unix)
	}
	// One Unix account is one user.
	if r := h.apply(&SetUserUnix{User: "ann", Unix: UnixIdentity{UID: u32(4242)}}); KindOf(r.Err) != KindExists {
		t.Fatalf("a second user got uid 4242: %v", r.Err)
	}
	if r := h.apply(&SetUserUnix{User: "ann", Unix: UnixIdentity{User: "rbob"}}); KindOf(r.Err) != KindExists {
		t.Fatalf("a second user got Unix account rbob: %v", r.Err)
	}
	for _, tc := range []struct {
		uid  uint32
		name string
		want string
	}{{4242, "", "bob"}, {1, "rbob", "bob"}, {1001, "ann", "ann"}, {1002, "bob", ""}, {1003, "", ""}} {
		u, ok := h.f.UserByUnix(tc.uid, tc.name)
		if u.Name != tc.want || ok != (tc.want != "") {
			t.Errorf("UserByUnix(%d, %q) = %q %v; want %q", tc.uid, tc.name, u.Name, ok, tc.want)
		}
	}

	job := &SubmitJob{Account: "phys", User: "bob", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Minute,
		Command: []string{"true"}, Dir: "/home/rbob", Env: []string{"A=1", "F=() { echo\n}"}, EnvCaptured: true, CheckIdentity: true}
	j := h.ok(job).(JobInfo)
	if j.Dir != "/home/rbob" || len(j.Env) != 2 || !j.EnvCaptured || j.RunAs.User != "rbob" || *j.RunAs.UID != 4242 {
		t.Fatalf("job captured %+v", j)
	}
	// A retry with the same request id but another environment is another job.
	job.RequestID, job.Env = "r1", []string{"A=1"}
	h.ok(job)
	job.Env = []string{"A=2"}
	if r := h.apply(job); r.Err == nil {
		t.Fatal("a request id was reused for another environment")
	}

	// The user named root maps to uid 0: refused when the server checks.
	rootJob := &SubmitJob{Account: "phys", User: "root", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Minute, Command: []string{"true"}, CheckIdentity: true}
	r := h.apply(rootJob)
	if KindOf(r.Err) != KindPermission || !strings.Contains(r.Err.Error(), "never run as root") {
		t.Fatalf("root's job: %v", r.Err)
	}
	// An entry from before the check applies as it did.
	rootJob.CheckIdentity = false
	h.ok(rootJob)
}

func TestCheckLaunchBounds(t *testing.T) {
	r := rules{version: CommandVersion}
	for _, tc := range []struct {
		dir string
		env []string
	}{
		{"relative/dir", nil},
		{"/a\x00b", nil},
		{"", []string{"NOEQUALS"}},
		{"", []string{"=x"}},
		{"", []string{"A=1", "A=2"}},
		{"", []string{"A=\x00"}},
		{"", []string{"A=\xff"}},
		{"", []string{"A=" + strings.Repeat("x", MaxEnvBytes)}},
		{"/" + strings.Repeat("d", MaxDirBytes), nil},
	} {
		err := checkLaunch(r, tc.dir, tc.env)
		if err == nil || err.Kind != KindInvalid {
			t.Errorf("checkLaunch(%.20q, %.20q) = %v; want invalid", tc.dir, tc.env, err)
		}
	}
	if err := checkLaunch(r, "/home/x", []string{"A=", "B=x=y"}); err != nil {
		t.Fatal(err)
	}
}
