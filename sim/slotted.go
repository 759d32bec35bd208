package sim

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/longfair/longfair/ledger"
)

// SlotLength is the virtual length of one slot of slotted input. Tasks of
// slotted input run for exactly one slot, and the scheduling quantum is one
// slot, which is the paper's model of its Table 1 and Example 4.
const SlotLength = time.Second

// LoadSlotted reads the paper's slotted examples, written as
//
//	{"capacity":{"cpu":100,"mem":100},
//	 "accounts":[{"name":"A","weight":1,"task":{"cpu":1,"mem":4}}, …],
//	 "slots":[{"A":30,"B":4},{"A":20,"B":24}, …]}
//
// The numbers in a slot are new tasks arriving at the slot's start; tasks not
// scheduled in a slot wait for the next. The cluster is one machine holding
// the whole capacity, every task runs one slot, and the replay ends after the
// last slot. name is the file name used in error messages.
func LoadSlotted(name string, r io.Reader) (*Workload, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	root, line, err := parseJSON(data)
	if err != nil {
		return nil, &InputError{File: name, Line: line, Msg: err.Error()}
	}
	l := slottedLoader{file: name}
	return l.load(root)
}

type slottedLoader struct {
	file      string
	resources []string
}

func (l *slottedLoader) errorf(v *jsonValue, field, format string, args ...any) error {
	return inputErrorf(l.file, v.line, field, format, args...)
}

func (l *slottedLoader) load(root *jsonValue) (*Workload, error) {
	if root.kind != jsonObject {
		return nil, l.errorf(root, "", "the top level must be an object with capacity, accounts and slots, found %v", root.kind)
	}
	for _, k := range root.keys {
		if k != "capacity" && k != "accounts" && k != "slots" {
			return nil, l.errorf(root.get(k), k, "unknown field: slotted input has only capacity, accounts and slots")
		}
	}
	capV, acctsV, slotsV := root.get("capacity"), root.get("accounts"), root.get("slots")
	for _, f := range []struct {
		name string
		v    *jsonValue
		kind jsonKind
	}{{"capacity", capV, jsonObject}, {"accounts", acctsV, jsonArray}, {"slots", slotsV, jsonArray}} {
		if f.v == nil {
			return nil, l.errorf(root, f.name, "missing: slotted input needs capacity, accounts and slots")
		}
		if f.v.kind != f.kind {
			return nil, l.errorf(f.v, f.name, "must be %v, found %v", f.kind, f.v.kind)
		}
	}
	w := &Workload{Name: l.file, Slot: SlotLength}
	capacity, err := l.capacity(capV)
	if err != nil {
		return nil, err
	}
	w.Resources = l.resources
	w.Nodes = []Node{{ID: "machine", Capacity: capacity}}
	demands, err := l.accounts(acctsV, w)
	if err != nil {
		return nil, err
	}
	if err := l.slots(slotsV, w, demands); err != nil {
		return nil, err
	}
	w.Horizon = ledger.Time(len(slotsV.vals)) * ledger.Time(SlotLength)
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", l.file, err)
	}
	return w, nil
}

func (l *slottedLoader) capacity(v *jsonValue) (ledger.Vector, error) {
	if len(v.keys) == 0 {
		return nil, l.errorf(v, "capacity", "is empty: name at least one resource, e.g. {\"cpu\":100}")
	}
	c := ledger.NewVector(len(v.keys))
	for i, k := range v.keys {
		field := "capacity." + k
		x, err := l.quantity(v.vals[i], field)
		if err != nil {
			return nil, err
		}
		if x <= 0 {
			return nil, l.errorf(v.vals[i], field, "%v must be positive", x)
		}
		if k == "" {
			return nil, l.errorf(v.vals[i], field, "resource names must not be empty")
		}
		c[i] = x
		l.resources = append(l.resources, k)
	}
	return c, nil
}

// quantity reads a finite non-negative number.
func (l *slottedLoader) quantity(v *jsonValue, field string) (float64, error) {
	if v.kind != jsonNumber {
		return 0, l.errorf(v, field, "must be a number, found %v", v.kind)
	}
	if math.IsInf(v.num, 0) || v.num < 0 {
		return 0, l.errorf(v, field, "%v must be a finite non-negative number", v.num)
	}
	return v.num, nil
}

func (l *slottedLoader) accounts(v *jsonValue, w *Workload) ([]ledger.Vector, error) {
	if len(v.vals) == 0 {
		return nil, l.errorf(v, "accounts", "is empty: list at least one account")
	}
	index := make(map[string]bool, len(v.vals))
	demands := make([]ledger.Vector, 0, len(v.vals))
	for i, a := range v.vals {
		path := fmt.Sprintf("accounts[%d]", i)
		if a.kind != jsonObject {
			return nil, l.errorf(a, path, "must be an object with name, weight and task, found %v", a.kind)
		}
		for _, k := range a.keys {
			if k != "name" && k != "weight" && k != "task" {
				return nil, l.errorf(a.get(k), path+"."+k, "unknown field: an account has name, weight and task")
			}
		}
		nameV := a.get("name")
		if nameV == nil || nameV.kind != jsonString || nameV.str == "" {
			return nil, l.errorf(a, path+".name", "missing or not a non-empty string")
		}
		if index[nameV.str] {
			return nil, l.errorf(nameV, path+".name", "account %q is listed twice", nameV.str)
		}
		index[nameV.str] = true
		weight := 1.0
		if wv := a.get("weight"); wv != nil {
			x, err := l.quantity(wv, path+".weight")
			if err != nil {
				return nil, err
			}
			weight = x
		}
		taskV := a.get("task")
		if taskV == nil || taskV.kind != jsonObject {
			return nil, l.errorf(a, path+".task", "missing or not an object: give the demand of one task, e.g. {\"cpu\":1,\"mem\":4}")
		}
		d, err := l.demand(taskV, path+".task")
		if err != nil {
			return nil, err
		}
		w.Accounts = append(w.Accounts, Account{Name: nameV.str, Weight: weight})
		demands = append(demands, d)
	}
	return demands, nil
}

func (l *slottedLoader) demand(v *jsonValue, path string) (ledger.Vector, error) {
	d := ledger.NewVector(len(l.resources))
	for i, k := range v.keys {
		field := path + "." + k
		j := indexOf(l.resources, k)
		if j < 0 {
			return nil, l.errorf(v.vals[i], field, "resource %q is not in capacity %v", k, l.resources)
		}
		x, err := l.quantity(v.vals[i], field)
		if err != nil {
			return nil, err
		}
		d[j] = x
	}
	if d.IsZero() {
		return nil, l.errorf(v, path, "demands nothing: a task must need some resource")
	}
	return d, nil
}

func (l *slottedLoader) slots(v *jsonValue, w *Workload, demands []ledger.Vector) error {
	for s, slot := range v.vals {
		path := fmt.Sprintf("slots[%d]", s)
		if slot.kind != jsonObject {
			return l.errorf(slot, path, "must be an object of account name to new tasks, found %v", slot.kind)
		}
		// Jobs of one slot go in account order, so the queue order does not
		// depend on how the author ordered the keys.
		counts := make([]int, len(w.Accounts))
		for i, k := range slot.keys {
			field := path + "." + k
			a := accountIndex(w.Accounts, k)
			if a < 0 {
				return l.errorf(slot.vals[i], field, "account %q is not listed in accounts", k)
			}
			x, err := l.quantity(slot.vals[i], field)
			if err != nil {
				return err
			}
			if x != math.Trunc(x) || x > math.MaxInt32 {
				return l.errorf(slot.vals[i], field, "%v is not a whole number of tasks", x)
			}
			counts[a] = int(x)
		}
		for a, n := range counts {
			if n == 0 {
				continue
			}
			w.Jobs = append(w.Jobs, Job{
				ID:      uint64(len(w.Jobs) + 1),
				Name:    fmt.Sprintf("slot %d", s),
				Account: a,
				Submit:  ledger.Time(s) * ledger.Time(SlotLength),
				Demand:  demands[a].Clone(),
				Tasks:   n,
				Runtime: SlotLength,
			})
		}
	}
	return nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

func accountIndex(accts []Account, name string) int {
	for i := range accts {
		if accts[i].Name == name {
			return i
		}
	}
	return -1
}
