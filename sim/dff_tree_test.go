package sim

import (
	"strings"
	"testing"

	"github.com/longfair/longfair/sched"
)

func TestLoadTree(t *testing.T) {
	mk := func() *Workload {
		return &Workload{Name: "w", Accounts: []Account{{Name: "alice"}, {Name: "bob"}, {Name: "carol", Group: "old"}}}
	}
	w := mk()
	err := LoadTree("tree.json", strings.NewReader(`{
  "groups": {"physics": 2, "physics/theory": 1},
  "accounts": {"alice": "physics/theory", "bob": "chemistry"}
}`), w)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Groups) != 2 || w.Groups[0] != (sched.Group{Path: "physics", Weight: 2}) {
		t.Errorf("groups %+v", w.Groups)
	}
	got := []string{w.Accounts[0].Group, w.Accounts[1].Group, w.Accounts[2].Group}
	if want := []string{"physics/theory", "chemistry", "old"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("groups of the accounts %q, want %q", got, want)
	}
	if err := w.validateTree(); err != nil {
		t.Errorf("the loaded tree does not validate: %v", err)
	}
	bad := map[string]string{
		`[1]`:                                 "tree.json:1: the top level",
		`{"groups": {"a//b": 1}}`:             "tree.json:1: groups.a//b",
		`{"groups": {"a": -1}}`:               "groups.a: weight must be",
		`{"groups": {"a": "x"}}`:              "groups.a: weight must be",
		"{\n\"accounts\": {\"dave\": \"a\"}}": "tree.json:2: accounts.dave: the workload has no such account; its accounts are alice, bob, carol",
		`{"accounts": {"alice": 3}}`:          "accounts.alice: must be a group path",
		`{"accounts": {"alice": "/x"}}`:       "accounts.alice: group path",
		`{"weights": {}}`:                     "weights: unknown field",
		`{"groups": {"a": 1, "a": 2}}`:        `key "a" appears twice`,
		`{"groups": `:                         "tree.json",
	}
	for in, want := range bad {
		w := mk()
		err := LoadTree("tree.json", strings.NewReader(in), w)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTree(%s): error %v, want it to contain %q", in, err, want)
		}
		if w.Groups != nil || w.Accounts[0].Group != "" {
			t.Errorf("LoadTree(%s) failed but changed the workload", in)
		}
	}
}
