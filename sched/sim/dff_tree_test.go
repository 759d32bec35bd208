package sim

import (
	"strings"
	"testing"

	"github.com/longfair/longfair/sched"
)

func TestLoadTree(t *testing.T) {
	w := &Workload{Accounts: []Account{{Name: "alice"}, {Name: "bob"}, {Name: "carol"}}}
	tree, err := LoadTree("tree.json", strings.NewReader(`{
  "groups": {"physics": 2, "physics/theory": 1},
  "accounts": {"alice": "physics/theory", "bob": "chemistry"}
}`), w)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Groups) != 2 || tree.Groups[0] != (sched.Group{Path: "physics", Weight: 2}) {
		t.Errorf("groups %+v", tree.Groups)
	}
	if want := []string{"physics/theory", "chemistry", ""}; strings.Join(tree.Parent, ",") != strings.Join(want, ",") {
		t.Errorf("parents %q, want %q", tree.Parent, want)
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
		_, err := LoadTree("tree.json", strings.NewReader(in), w)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTree(%s): error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestRunPaperRefusesATreeForMoreAccounts(t *testing.T) {
	w, _, err := DFFCluster()
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunPaper(w, &Tree{Parent: make([]string, 9)}, Config{Settings: sched.DefaultSettings()})
	if err == nil || !strings.Contains(err.Error(), "9 accounts") {
		t.Errorf("error %v, want it to say the tree names 9 accounts", err)
	}
}
