package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/longfair/longfair/sched"
)

// LoadTree reads an account tree for hdrf and dff and fits it to the
// workload, written as
//
//	{"groups":   {"physics": 2, "physics/theory": 1, "chemistry": 1},
//	 "accounts": {"alice": "physics/theory", "bob": "chemistry"}}
//
// groups gives inner nodes their weights (a group named only as an
// account's parent weighs 1); accounts puts workload accounts under groups
// (an account not listed stays under the root). name is the file name used
// in error messages.
func LoadTree(name string, r io.Reader, w *Workload) (*Tree, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	root, line, err := parseJSON(data)
	if err != nil {
		return nil, &InputError{File: name, Line: line, Msg: err.Error()}
	}
	if root.kind != jsonObject {
		return nil, inputErrorf(name, root.line, "", "the top level must be an object with groups and accounts, found %v", root.kind)
	}
	tree := &Tree{Parent: make([]string, len(w.Accounts))}
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "groups":
			if v.kind != jsonObject {
				return nil, inputErrorf(name, v.line, k, "must be an object of group path to weight, found %v", v.kind)
			}
			for j, path := range v.keys {
				g := v.vals[j]
				field := "groups." + path
				if err := sched.ValidateGroupPath(path); err != nil {
					return nil, inputErrorf(name, g.line, field, "%v", err)
				}
				if g.kind != jsonNumber || math.IsNaN(g.num) || math.IsInf(g.num, 0) || g.num < 0 {
					return nil, inputErrorf(name, g.line, field, "weight must be a finite, non-negative number, found %v", describeJSON(g))
				}
				tree.Groups = append(tree.Groups, sched.Group{Path: path, Weight: g.num})
			}
		case "accounts":
			if v.kind != jsonObject {
				return nil, inputErrorf(name, v.line, k, "must be an object of account name to group path, found %v", v.kind)
			}
			for j, acct := range v.keys {
				g := v.vals[j]
				field := "accounts." + acct
				a := slices.IndexFunc(w.Accounts, func(x Account) bool { return x.Name == acct })
				if a < 0 {
					return nil, inputErrorf(name, g.line, field, "the workload has no such account; its accounts are %s", accountNames(w))
				}
				if g.kind != jsonString {
					return nil, inputErrorf(name, g.line, field, "must be a group path such as \"physics/theory\", found %v", describeJSON(g))
				}
				if err := sched.ValidateGroupPath(g.str); err != nil {
					return nil, inputErrorf(name, g.line, field, "%v", err)
				}
				tree.Parent[a] = g.str
			}
		default:
			return nil, inputErrorf(name, v.line, k, "unknown field: an account tree has only groups and accounts")
		}
	}
	return tree, nil
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
