package fsm

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// seedEntries are valid entries of every command type, for the fuzzers'
// corpus.
func seedEntries(t testing.TB) [][]byte {
	cmds := []Command{
		&CreateAccount{Name: "bio", Weight: f64(2)},
		&UpdateAccount{Name: "phys", Contribution: f64(0.5)},
		&CreateUser{Name: "bob", Accounts: []string{"phys"}},
		&AddMembership{User: "ann", Account: "phys"},
		&RemoveMembership{User: "ann", Account: "phys"},
		&Grant{ID: "g9", Account: "phys", Amount: 5, Expires: t0 + 1e12},
		&UpdateSettings{Policy: strp("drf"), Window: strp("decay:1h"), AddResources: []string{"gpu"}},
		&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 3, Walltime: time.Hour, Command: []string{"x"}},
		&CancelJob{JobID: 1},
		&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 2, Node: "n1"}}},
		&TaskEvents{Events: []TaskEvent{exited(1, 0, 1, 0, time.Minute), {JobID: 1, Task: 1, Attempt: 1, Kind: TaskLost}}},
		&NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 4}},
		&NodeDown{ID: "n1"},
	}
	var out [][]byte
	for _, c := range cmds {
		out = append(out, rawCommand(t, t0+1e9, c))
	}
	return out
}

// FuzzDecode: whatever the bytes, Decode returns a command or an *Error,
// never panics, and what it accepts re-encodes to an entry it accepts the
// same way.
func FuzzDecode(f *testing.F) {
	for _, e := range seedEntries(f) {
		f.Add(e)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 'n', 'u', 'l', 'l'})
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Decode(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("refusal %v is not an *Error with a message", err)
			}
			return
		}
		again, err := Encode(env.Time, env.Command)
		if err != nil {
			t.Fatalf("a decoded command does not re-encode: %v", err)
		}
		env2, err := Decode(again)
		if err != nil || env2.Time != env.Time || env2.Command.Type() != env.Command.Type() {
			t.Fatalf("re-encoded command decodes differently: %v", err)
		}
	})
}

// FuzzApply: arbitrary entries applied to a busy FSM never panic; each is
// applied or refused, and a refused one leaves the state as it was.
func FuzzApply(f *testing.F) {
	for _, e := range seedEntries(f) {
		f.Add(e)
	}
	h := busyHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := stateDigest(t, h.f)
		h.now = h.now.Add(time.Second)
		resp := h.f.Apply(&raft.Log{Index: uint64(len(h.log.entries)) + 1, Type: raft.LogCommand, Data: data})
		h.log.addRaw(data)
		r, ok := resp.(*Result)
		if !ok {
			t.Fatalf("response %T", resp)
		}
		if r.Err != nil && stateDigest(t, h.f) != before {
			t.Fatalf("refused entry (%v) changed the state", r.Err)
		}
		if h.f.Err() != nil {
			t.Fatalf("FSM broke: %v", h.f.Err())
		}
	})
}
