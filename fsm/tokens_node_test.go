package fsm

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A worker token bound to a node keeps its node through every way the
// state is read back: the apply's answer, lookups by id and by secret, a
// snapshot restored elsewhere and a restart.
func TestWorkerTokenKeepsItsNode(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	bound := h.ok(&CreateToken{ID: "w-c01", SecretHash: hashOf("worker-c01-secret-1"), Role: RoleWorker, Node: "c01.rack3:7411"}).(TokenInfo)
	if bound.Node != "c01.rack3:7411" || bound.Role != RoleWorker {
		t.Fatalf("created token = %+v, want a worker token bound to c01.rack3:7411", bound)
	}
	h.ok(&CreateToken{ID: "w-any", SecretHash: hashOf("worker-any-secret-1"), Role: RoleWorker})

	check := func(name string, f *FSM) {
		t.Helper()
		for id, node := range map[string]string{"w-c01": "c01.rack3:7411", "w-any": ""} {
			info, err := f.Token(id)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if info.Node != node {
				t.Fatalf("%s: token %s is bound to %q, want %q", name, id, info.Node, node)
			}
		}
		if info, ok := f.TokenBySecretHash(hashOf("worker-c01-secret-1")); !ok || info.Node != "c01.rack3:7411" {
			t.Fatalf("%s: lookup by secret = %+v, %v; want the token bound to c01.rack3:7411", name, info, ok)
		}
		var listed []TokenInfo
		listed, _ = f.Tokens("", 10)
		nodes := map[string]string{}
		for _, tok := range listed {
			nodes[tok.ID] = tok.Node
		}
		if nodes["w-c01"] != "c01.rack3:7411" || nodes["w-any"] != "" {
			t.Fatalf("%s: listing shows nodes %v", name, nodes)
		}
	}
	check("live", h.f)

	sink := snapshotOf(t, h.f)
	restored := openFSM(t, t.TempDir())
	if err := restored.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	check("restored", restored)

	// A replica that applies the same log holds the same state.
	replica := openFSM(t, t.TempDir())
	replay(t, replica, h.log, []int{2})
	check("replica", replica)
	if digestOf(t, replica) != digestOf(t, h.f) {
		t.Fatal("a replica applying the same log differs from the original")
	}

	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openFSM(t, h.dir)
	check("reopened", reopened)
	if digestOf(t, reopened) != digestOf(t, restored) {
		t.Fatal("the reopened and the restored state differ")
	}
}

// A log written before tokens could be bound replays to the same state:
// its CreateToken entries (no node field) decode as unbound tokens, an
// unbound token is still encoded and stored byte for byte as before, so
// the digest of a replayed log does not change.
func TestTokenEntriesFromBeforeNodeBindingStillApply(t *testing.T) {
	// The entry as an older release wrote it, spelled out by hand.
	oldBody := `{"id":"w0","secret_hash":"` + hashOf("old-worker-secret-1") + `","role":"worker","description":"rack 12"}`
	old := make([]byte, envelopeHeader, envelopeHeader+len(oldBody))
	old[0], old[1] = CommandVersion, byte(TypeCreateToken)
	binary.BigEndian.PutUint64(old[2:], uint64(t0))
	old = append(old, oldBody...)

	now, err := Encode(t0, &CreateToken{ID: "w0", SecretHash: hashOf("old-worker-secret-1"), Role: RoleWorker, Description: "rack 12"})
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(old) {
		t.Fatalf("an unbound token is encoded differently than before:\n now %s\n was %s", now[envelopeHeader:], old[envelopeHeader:])
	}

	h := newHarness(t)
	h.log.addRaw(old)
	if r := h.f.Apply(h.log.entries[0]).(*Result); r.Err != nil {
		t.Fatalf("an old CreateToken entry is refused: %v", r.Err)
	}
	info, err := h.f.Token("w0")
	if err != nil || info.Node != "" || info.Role != RoleWorker {
		t.Fatalf("old token = %+v, %v; want an unbound worker token", info, err)
	}

	// The stored record has exactly the keys an older release stored.
	var stored map[string]json.RawMessage
	if err := h.f.db.View(func(tx *bolt.Tx) error {
		return json.Unmarshal(tx.Bucket(bucketTokens).Get([]byte("w0")), &stored)
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored["node"]; ok || len(stored) != 5 {
		t.Fatalf("an unbound token is stored with keys %v; want id, secret_hash, role, description, created_at", keysOf(stored))
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Only worker tokens are bound, and only to a valid node id: anything else
// is refused at decode (so no server applies it) and changes nothing.
func TestTokenNodeRefusals(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	before := stateDigest(t, h.f)
	for name, c := range map[string]*CreateToken{
		"admin token bound":   {ID: "a", SecretHash: hashOf("admin-secret-0001"), Role: RoleAdmin, Node: "c01"},
		"user token bound":    {ID: "u", SecretHash: hashOf("user-secret-00001"), Role: RoleUser, User: "ann", Node: "c01"},
		"node starts with -":  {ID: "w1", SecretHash: hashOf("worker-secret-001"), Role: RoleWorker, Node: "-c01"},
		"node with a space":   {ID: "w2", SecretHash: hashOf("worker-secret-002"), Role: RoleWorker, Node: "c 01"},
		"node with a slash":   {ID: "w3", SecretHash: hashOf("worker-secret-003"), Role: RoleWorker, Node: "c01/x"},
		"node over 255 bytes": {ID: "w4", SecretHash: hashOf("worker-secret-004"), Role: RoleWorker, Node: string(make([]byte, maxNodeIDLength+1))},
	} {
		if _, err := Encode(t0, c); KindOf(err) != KindInvalid {
			t.Errorf("%s: Encode gave %v, want InvalidArgument", name, err)
		}
		// A leader that skipped the check: every server refuses the entry.
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, envelopeHeader, envelopeHeader+len(body))
		raw[0], raw[1] = CommandVersion, byte(TypeCreateToken)
		binary.BigEndian.PutUint64(raw[2:], uint64(t0))
		e := h.log.addRaw(append(raw, body...))
		if r := h.f.Apply(e).(*Result); KindOf(r.Err) != KindInvalid {
			t.Errorf("%s: applied with %v, want InvalidArgument", name, r.Err)
		}
	}
	if stateDigest(t, h.f) != before {
		t.Fatal("a refused bound token changed the state")
	}
}
