package fsm

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// treeHarness has accounts phys, chem and bio (weights 1, 2, 3) and one
// up node of 16 cpu and 64 mem.
func treeHarness(t testing.TB) *harness {
	h := newHarness(t)
	for i, name := range []string{"phys", "chem", "bio"} {
		h.ok(&CreateAccount{Name: name, Weight: f64(float64(i + 1))})
	}
	h.ok(&NodeUp{ID: "n1", Capacity: map[string]float64{"cpu": 16, "mem": 64 << 30}})
	return h
}

func TestGroupsBuildTheAccountTree(t *testing.T) {
	h := treeHarness(t)
	g := h.ok(&SetGroupWeight{Path: "science/physics", Weight: 3}).(GroupInfo)
	if g.Path != "science/physics" || g.Weight != 3 {
		t.Fatalf("set-group-weight answered %+v", g)
	}
	a := h.ok(&SetAccountGroup{Account: "phys", Group: "science/physics"}).(AccountInfo)
	if a.Group != "science/physics" {
		t.Fatalf("account group %q after set-account-group", a.Group)
	}
	h.ok(&SetAccountGroup{Account: "chem", Group: "science/chemistry"})
	h.ok(&SetGroupWeight{Path: "science", Weight: 2})

	groups := h.f.Groups()
	want := []struct {
		path     string
		weight   float64
		accounts []string
		groups   []string
	}{
		{"science", 2, []string{}, []string{"chemistry", "physics"}},
		{"science/chemistry", 1, []string{"chem"}, []string{}},
		{"science/physics", 3, []string{"phys"}, []string{}},
	}
	if len(groups) != len(want) {
		t.Fatalf("groups %+v, want %d", groups, len(want))
	}
	for i, w := range want {
		g := groups[i]
		if g.Path != w.path || g.Weight != w.weight || !reflect.DeepEqual(g.Accounts, w.accounts) || !reflect.DeepEqual(g.Groups, w.groups) {
			t.Errorf("group %d = %+v, want %+v", i, g, w)
		}
	}

	// The scheduler's view carries the tree, and the fairness report's
	// tree is the engine's own layout of a view built by hand.
	v := h.f.View(h.now)
	wantGroups := []sched.Group{{Path: "science", Weight: 2}, {Path: "science/chemistry", Weight: 1}, {Path: "science/physics", Weight: 3}}
	if !reflect.DeepEqual(v.Groups, wantGroups) {
		t.Fatalf("view groups %+v, want %+v", v.Groups, wantGroups)
	}
	parents := map[string]string{}
	for _, acct := range v.Accounts {
		parents[acct.Name] = acct.Group
	}
	if parents["phys"] != "science/physics" || parents["chem"] != "science/chemistry" || parents["bio"] != "" {
		t.Fatalf("view account groups %v", parents)
	}
	tree, resources, err := h.f.AccountTree(h.now)
	if err != nil {
		t.Fatal(err)
	}
	ref := &sched.View{Now: v.Now, Resources: resources, Settings: v.Settings, Nodes: v.Nodes, Groups: wantGroups}
	placed := map[string]string{"phys": "science/physics", "chem": "science/chemistry"}
	for _, acct := range v.Accounts {
		acct.Group = placed[acct.Name]
		ref.Accounts = append(ref.Accounts, acct)
	}
	refTree, err := sched.AccountTree(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tree, refTree) {
		t.Fatalf("fsm tree %+v\ndiffers from the engine's layout %+v", tree, refTree)
	}
	var paths []string
	for _, n := range tree {
		paths = append(paths, n.Path)
	}
	if got := strings.Join(paths, " "); got != " bio science science/chemistry science/chemistry/chem science/physics science/physics/phys" {
		t.Fatalf("tree paths %q", got)
	}

	// Back to the root, then the emptied groups can go.
	h.ok(&SetAccountGroup{Account: "phys"})
	h.ok(&RemoveGroup{Path: "science/physics"})
	if got := len(h.f.Groups()); got != 2 {
		t.Fatalf("%d groups after removing one of 3", got)
	}
	// Everything survives a restart.
	before := h.f.Groups()
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	f := openFSM(t, h.dir)
	if !reflect.DeepEqual(f.Groups(), before) {
		t.Fatalf("groups after restart %+v, want %+v", f.Groups(), before)
	}
	if a, _ := f.Account("chem"); a.Group != "science/chemistry" {
		t.Fatalf("chem's group after restart: %q", a.Group)
	}
}

func TestGroupRefusalsChangeNothing(t *testing.T) {
	h := treeHarness(t)
	h.ok(&SetAccountGroup{Account: "chem", Group: "lab"})
	cases := []struct {
		name  string
		entry func(t testing.TB, at ledger.Time) []byte
		code  Kind
		words []string
	}{
		{"empty path", cmd(&SetGroupWeight{Path: "", Weight: 1}), KindInvalid, []string{"empty"}},
		{"double slash", cmd(&SetGroupWeight{Path: "a//b", Weight: 1}), KindInvalid, []string{"empty name"}},
		{"leading slash", cmd(&SetGroupWeight{Path: "/a", Weight: 1}), KindInvalid, []string{"slash"}},
		{"odd name", cmd(&SetGroupWeight{Path: "a b", Weight: 1}), KindInvalid, []string{"' '"}},
		{"too deep", cmd(&SetGroupWeight{Path: "a/b/c/d/e/f/g/h/i", Weight: 1}), KindInvalid, []string{"at most 8"}},
		{"negative weight", cmd(&SetGroupWeight{Path: "a", Weight: -1}), KindInvalid, []string{"group weight"}},
		{"named like an account", cmd(&SetGroupWeight{Path: "phys", Weight: 1}), KindPrecondition, []string{"phys", "same name"}},
		{"named like an account deeper", cmd(&SetGroupWeight{Path: "lab/chem/x", Weight: 1}), KindPrecondition, []string{"chem", "group lab"}},
		{"account into clash", cmd(&SetAccountGroup{Account: "phys", Group: "phys"}), KindPrecondition, []string{"phys"}},
		{"unknown account", cmd(&SetAccountGroup{Account: "geo", Group: "lab"}), KindNotFound, []string{"geo"}},
		{"remove unknown", cmd(&RemoveGroup{Path: "nope"}), KindNotFound, []string{"nope", "group list"}},
		{"remove non-empty", cmd(&RemoveGroup{Path: "lab"}), KindPrecondition, []string{"chem", "set-group"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectRefusal(t, h, c.entry, c.code, c.words)
		})
	}
	// An account cannot move under a group that holds a group of its name.
	h.ok(&SetGroupWeight{Path: "lab/phys", Weight: 1})
	expectRefusal(t, h, cmd(&SetAccountGroup{Account: "phys", Group: "lab"}), KindPrecondition, []string{"phys", "different names"})
	// A command with a bad shape is refused before it is proposed too.
	if _, err := Encode(h.now, &SetGroupWeight{Path: "x/", Weight: 1}); KindOf(err) != KindInvalid {
		t.Fatalf("Encode of a bad path: %v", err)
	}
}

// expectRefusal applies an entry that must be refused with code and a
// message holding words, and checks that it changed nothing.
func expectRefusal(t *testing.T, h *harness, entry func(testing.TB, ledger.Time) []byte, code Kind, words []string) *Result {
	t.Helper()
	before := stateDigest(t, h.f)
	later := h.now.Add(time.Hour)
	view := h.f.View(later)
	h.now = h.now.Add(time.Second)
	r := h.f.Apply(h.log.addRaw(entry(t, h.now))).(*Result)
	if r.Err == nil {
		t.Fatalf("accepted; want %v", code)
	}
	if KindOf(r.Err) != code {
		t.Fatalf("kind %v (%v), want %v", KindOf(r.Err), r.Err, code)
	}
	for _, w := range words {
		if !strings.Contains(r.Err.Error(), w) {
			t.Errorf("message %q does not mention %q", r.Err, w)
		}
	}
	if stateDigest(t, h.f) != before {
		t.Fatal("a refused command changed the stored state")
	}
	if after := h.f.View(later); !reflect.DeepEqual(view, after) {
		t.Fatal("a refused command changed the in-memory state")
	}
	return r
}
