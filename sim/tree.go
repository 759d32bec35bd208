package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/longfair/longfair/sched"
)

// LoadTree reads an account tree for hdrf and dff and arranges the
// workload's accounts in it (Workload.Groups, Account.Group). The file is
//
//	{"groups":   {"physics": 2, "physics/theory": 1, "chemistry": 1},
//	 "accounts": {"alice": "physics/theory", "bob": "chemistry"}}
//
// groups gives inner nodes their weights (a group named only as an
// account's parent weighs 1); accounts puts workload accounts under groups
// (an account not listed stays where it was, by default under the root).
// name is the file name used in error messages; on an error the workload is
// unchanged.
func LoadTree(name string, r io.Reader, w *Workload) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	root, line, err := parseJSON(data)
	if err != nil {
		return &InputError{File: name, Line: line, Msg: err.Error()}
	}
	if root.kind != jsonObject {
		return inputErrorf(name, root.line, "", "the top level must be an object with groups and accounts, found %v", root.kind)
	}
	var groups []sched.Group
	parents := map[int]string{}
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "groups":
			if v.kind != jsonObject {
				return inputErrorf(name, v.line, k, "must be an object of group path to weight, found %v", v.kind)
			}
			for j, path := range v.keys {
				g := v.vals[j]
				field := "groups." + path
				if err := sched.ValidateGroupPath(path); err != nil {
					return inputErrorf(name, g.line, field, "%v", err)
				}
				if g.kind != jsonNumber || math.IsNaN(g.num) || math.IsInf(g.num, 0) || g.num < 0 {
					return inputErrorf(name, g.line, field, "weight must be a finite, non-negative number, found %v", describeJSON(g))
				}
				groups = append(groups, sched.Group{Path: path, Weight: g.num})
			}
		case "accounts":
			if v.kind != jsonObject {
				return inputErrorf(name, v.line, k, "must be an object of account name to group path, found %v", v.kind)
			}
			for j, acct := range v.keys {
				g := v.vals[j]
				field := "accounts." + acct
				a := slices.IndexFunc(w.Accounts, func(x Account) bool { return x.Name == acct })
				if a < 0 {
					return inputErrorf(name, g.line, field, "the workload has no such account; its accounts are %s", accountNames(w))
				}
				if g.kind != jsonString {
					return inputErrorf(name, g.line, field, "must be a group path such as \"physics/theory\", found %v", describeJSON(g))
				}
				if err := sched.ValidateGroupPath(g.str); err != nil {
					return inputErrorf(name, g.line, field, "%v", err)
				}
				parents[a] = g.str
			}
		default:
			return inputErrorf(name, v.line, k, "unknown field: an account tree has only groups and accounts")
		}
	}
	w.Groups = groups
	for a, p := range parents {
		w.Accounts[a].Group = p
	}
	return nil
}

// validateTree checks the workload's account tree.
func (w *Workload) validateTree() error {
	seen := make(map[string]bool, len(w.Groups))
	for _, g := range w.Groups {
		if err := sched.ValidateGroupPath(g.Path); err != nil {
			return fmt.Errorf("workload %q: %w", w.Name, err)
		}
		if seen[g.Path] {
			return fmt.Errorf("workload %q: group %q is listed twice", w.Name, g.Path)
		}
		seen[g.Path] = true
		if math.IsNaN(g.Weight) || math.IsInf(g.Weight, 0) || g.Weight < 0 {
			return fmt.Errorf("workload %q: group %q has weight %v: weights must be finite and non-negative", w.Name, g.Path, g.Weight)
		}
	}
	for _, a := range w.Accounts {
		if a.Group != "" {
			if err := sched.ValidateGroupPath(a.Group); err != nil {
				return fmt.Errorf("workload %q account %q: %w", w.Name, a.Name, err)
			}
		}
	}
	return nil
}

func describeJSON(v *jsonValue) string {
	switch v.kind {
	case jsonNumber:
		return fmt.Sprint(v.num)
	case jsonString:
		return fmt.Sprintf("%q", v.str)
	}
	return v.kind.String()
}

func accountNames(w *Workload) string {
	names := make([]string, 0, len(w.Accounts))
	for _, a := range w.Accounts {
		names = append(names, a.Name)
	}
	if len(names) > 12 {
		names = append(names[:12], fmt.Sprintf("… (%d in all)", len(w.Accounts)))
	}
	return strings.Join(names, ", ")
}
