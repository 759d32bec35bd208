package fsm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"
)

// hashOf is the SHA-256 of a secret as the server proposes it, computed
// here independently of package ops.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func wantKind(t *testing.T, r *Result, code Kind) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("%s was applied; want refusal with %v", r.Type, code)
	}
	if got := KindOf(r.Err); got != code {
		t.Fatalf("%s refused with %v (%v); want %v", r.Type, got, r.Err, code)
	}
}

func TestBootstrapWorksOnceAndChangesNothingAfter(t *testing.T) {
	h := newHarness(t)
	if ok, _ := h.f.ACLBootstrapped(); ok {
		t.Fatal("a new FSM says it is bootstrapped")
	}
	info := h.ok(&CreateToken{ID: "boot", SecretHash: hashOf("first-secret-0123"), Role: RoleAdmin, Bootstrap: true}).(TokenInfo)
	if !info.Bootstrap || info.Role != RoleAdmin || info.CreatedAt != t0 {
		t.Fatalf("bootstrap token = %+v", info)
	}
	if ok, at := h.f.ACLBootstrapped(); !ok || at != t0 {
		t.Fatalf("ACLBootstrapped = %v, %v; want true at t0", ok, at)
	}
	before := stateDigest(t, h.f)
	gen := h.f.ACLGeneration()
	r := h.at(time.Minute).apply(&CreateToken{ID: "boot2", SecretHash: hashOf("second-secret-0123"), Role: RoleAdmin, Bootstrap: true})
	wantKind(t, r, KindPrecondition)
	if stateDigest(t, h.f) != before {
		t.Fatal("a refused second bootstrap changed the state")
	}
	if h.f.ACLGeneration() != gen {
		t.Fatal("a refused bootstrap moved the ACL generation")
	}
	if _, ok := h.f.TokenBySecretHash(hashOf("second-secret-0123")); ok {
		t.Fatal("the refused bootstrap token can be looked up")
	}
}

func TestCreateTokenRefusals(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	h.ok(&CreateToken{ID: "a1", SecretHash: hashOf("s-admin-000000001"), Role: RoleAdmin})
	before := stateDigest(t, h.f)
	for _, c := range []struct {
		name string
		cmd  *CreateToken
		code Kind
	}{
		{"id taken", &CreateToken{ID: "a1", SecretHash: hashOf("other-secret-00001"), Role: RoleAdmin}, KindExists},
		{"secret taken", &CreateToken{ID: "a2", SecretHash: hashOf("s-admin-000000001"), Role: RoleAdmin}, KindExists},
		{"unknown user", &CreateToken{ID: "u1", SecretHash: hashOf("s-user-0000000001"), Role: RoleUser, User: "nobody"}, KindNotFound},
		{"expires before created", &CreateToken{ID: "u2", SecretHash: hashOf("s-user-0000000002"), Role: RoleUser, User: "ann", ExpiresAt: t0}, KindInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantKind(t, h.apply(c.cmd), c.code)
			if stateDigest(t, h.f) != before {
				t.Fatal("a refused CreateToken changed the state")
			}
		})
	}
}

func TestMalformedTokenCommandsAreRefusedAtDecode(t *testing.T) {
	good := CreateToken{ID: "t1", SecretHash: hashOf("some-secret-000001"), Role: RoleUser, User: "ann"}
	for _, c := range []struct {
		name   string
		change func(*CreateToken)
	}{
		{"secret instead of hash", func(c *CreateToken) { c.SecretHash = "some-secret-000001" }},
		{"upper-case hash", func(c *CreateToken) { c.SecretHash = "AB" + c.SecretHash[2:] }},
		{"no role", func(c *CreateToken) { c.Role = "" }},
		{"unknown role", func(c *CreateToken) { c.Role = "root" }},
		{"user token without user", func(c *CreateToken) { c.User = "" }},
		{"bad user name", func(c *CreateToken) { c.User = "ann smith" }},
		{"bad id", func(c *CreateToken) { c.ID = "" }},
		{"bootstrap user token", func(c *CreateToken) { c.Bootstrap = true }},
		{"negative expiry", func(c *CreateToken) { c.ExpiresAt = -1 }},
		{"long description", func(c *CreateToken) { c.Description = string(make([]byte, MaxTokenDescriptionBytes+1)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := good
			c.change(&cmd)
			if _, err := Encode(t0, &cmd); KindOf(err) != KindInvalid {
				t.Fatalf("Encode: %v; want InvalidArgument", err)
			}
		})
	}
	if _, err := Encode(t0, &good); err != nil {
		t.Fatalf("the good command does not encode: %v", err)
	}
	if _, err := Encode(t0, &RevokeToken{ID: ""}); KindOf(err) != KindInvalid {
		t.Fatalf("RevokeToken without id: %v", err)
	}
}

func TestRevokeTokenAndTheLastAdmin(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	h.ok(&CreateToken{ID: "admin1", SecretHash: hashOf("admin-secret-00001"), Role: RoleAdmin, Bootstrap: true})
	h.ok(&CreateToken{ID: "user1", SecretHash: hashOf("user-secret-000001"), Role: RoleUser, User: "ann"})
	// An admin that expires at t0+1h does not count once it has expired.
	h.ok(&CreateToken{ID: "admin2", SecretHash: hashOf("admin-secret-00002"), Role: RoleAdmin, ExpiresAt: t0.Add(time.Hour)})

	h.at(time.Minute)
	revoked := h.ok(&RevokeToken{ID: "user1"}).(TokenInfo)
	if revoked.RevokedAt != t0.Add(time.Minute) || revoked.UsableAt(t0.Add(time.Minute)) {
		t.Fatalf("revoked token = %+v", revoked)
	}
	gen := h.f.ACLGeneration()
	again := h.at(2 * time.Minute).ok(&RevokeToken{ID: "user1"}).(TokenInfo)
	if again.RevokedAt != revoked.RevokedAt {
		t.Fatalf("revoking again moved the revocation time: %v, then %v", revoked.RevokedAt, again.RevokedAt)
	}
	if h.f.ACLGeneration() != gen {
		t.Fatal("revoking a revoked token moved the ACL generation")
	}
	if info, ok := h.f.TokenBySecretHash(hashOf("user-secret-000001")); !ok || info.RevokedAt == 0 {
		t.Fatalf("a revoked token must still be found, marked revoked: %+v, %v", info, ok)
	}
	wantKind(t, h.apply(&RevokeToken{ID: "nope"}), KindNotFound)

	// At t0+2h admin2 has expired: admin1 is the last usable admin.
	h.at(2 * time.Hour)
	before := stateDigest(t, h.f)
	wantKind(t, h.apply(&RevokeToken{ID: "admin1"}), KindPrecondition)
	if stateDigest(t, h.f) != before {
		t.Fatal("a refused revocation changed the state")
	}
	h.ok(&CreateToken{ID: "admin3", SecretHash: hashOf("admin-secret-00003"), Role: RoleAdmin})
	h.ok(&RevokeToken{ID: "admin1"})
	if _, err := h.f.Token("admin1"); err != nil {
		t.Fatal(err)
	}
}

func TestTokenGenerationMovesOnlyWithTokenChanges(t *testing.T) {
	h := newHarness(t)
	g0 := h.f.ACLGeneration()
	h.ok(&CreateAccount{Name: "phys"})
	if h.f.ACLGeneration() != g0 {
		t.Fatal("creating an account moved the ACL generation")
	}
	h.ok(&CreateToken{ID: "a", SecretHash: hashOf("secret-a-00000001"), Role: RoleAdmin})
	g1 := h.f.ACLGeneration()
	if g1 == g0 {
		t.Fatal("creating a token did not move the ACL generation")
	}
	h.ok(&CreateToken{ID: "b", SecretHash: hashOf("secret-b-00000001"), Role: RoleAdmin})
	h.ok(&RevokeToken{ID: "a"})
	if h.f.ACLGeneration() == g1 {
		t.Fatal("revoking a token did not move the ACL generation")
	}
}

func TestTokensListInIDOrderAndSurviveRestartAndRestore(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	want := map[string]TokenRole{}
	for i := range 25 {
		id := fmt.Sprintf("tok-%02d", (i*7)%25)
		role := []TokenRole{RoleAdmin, RoleUser, RoleWorker}[i%3]
		c := &CreateToken{ID: id, SecretHash: hashOf(fmt.Sprintf("secret-number-%04d", i)), Role: role, Description: "d " + id}
		if role == RoleUser {
			c.User = "ann"
		}
		h.ok(c)
		want[id] = role
	}
	h.ok(&RevokeToken{ID: "tok-03"})

	list := func(f *FSM) []TokenInfo {
		var all []TokenInfo
		after := ""
		for {
			page, next := f.Tokens(after, 7)
			all = append(all, page...)
			if next == "" {
				return all
			}
			after = next
		}
	}
	check := func(name string, f *FSM) {
		t.Helper()
		all := list(f)
		if len(all) != len(want) {
			t.Fatalf("%s: %d tokens listed, want %d", name, len(all), len(want))
		}
		for i, tok := range all {
			if i > 0 && all[i-1].ID >= tok.ID {
				t.Fatalf("%s: tokens out of order: %s before %s", name, all[i-1].ID, tok.ID)
			}
			if want[tok.ID] != tok.Role {
				t.Fatalf("%s: token %s has role %s, want %s", name, tok.ID, tok.Role, want[tok.ID])
			}
			if (tok.RevokedAt != 0) != (tok.ID == "tok-03") {
				t.Fatalf("%s: token %s revoked at %v", name, tok.ID, tok.RevokedAt)
			}
		}
	}
	check("live", h.f)

	// A snapshot restored into a fresh FSM holds the same tokens.
	sink := snapshotOf(t, h.f)
	other := openFSM(t, t.TempDir())
	g := other.ACLGeneration()
	if err := other.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	if other.ACLGeneration() == g {
		t.Fatal("a restore did not move the ACL generation")
	}
	check("restored", other)
	if _, ok := other.TokenBySecretHash(hashOf("secret-number-0004")); !ok {
		t.Fatal("restored FSM cannot look a token up by its secret's hash")
	}

	// A restart reads them back from the file.
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openFSM(t, h.dir)
	check("reopened", reopened)
	if digestOf(t, reopened) != digestOf(t, other) {
		t.Fatal("the reopened and the restored state differ")
	}
}

func TestTokenSecretsNeverReachTheState(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	secret := "plain-secret-that-must-not-be-stored"
	h.ok(&CreateToken{ID: "t", SecretHash: hashOf(secret), Role: RoleUser, User: "ann", Description: "ann's laptop"})
	sink := snapshotOf(t, h.f)
	if containsBytes(sink.Bytes(), []byte(secret)) {
		t.Fatal("the snapshot holds the token's secret")
	}
	if !containsBytes(sink.Bytes(), []byte(hashOf(secret))) {
		t.Fatal("the snapshot does not hold the secret's hash: the test looks at the wrong bytes")
	}
	for _, e := range h.log.entries {
		if containsBytes(e.Data, []byte(secret)) {
			t.Fatal("a log entry holds the secret")
		}
	}
}

func containsBytes(haystack, needle []byte) bool {
	for i := 0; i+len(needle) <= len(haystack); i++ {
		if string(haystack[i:i+len(needle)]) == string(needle) {
			return true
		}
	}
	return false
}

func TestTokenReplicasAgree(t *testing.T) {
	h := newHarness(t)
	h.setup(10)
	h.ok(&CreateToken{ID: "boot", SecretHash: hashOf("boot-secret-000001"), Role: RoleAdmin, Bootstrap: true})
	h.ok(&CreateToken{ID: "u", SecretHash: hashOf("user-secret-000001"), Role: RoleUser, User: "ann"})
	h.apply(&CreateToken{ID: "boot2", SecretHash: hashOf("boot-secret-000002"), Role: RoleAdmin, Bootstrap: true})
	h.ok(&RevokeToken{ID: "u"})
	other := openFSM(t, t.TempDir())
	for _, size := range []int{1, 3} {
		f := other
		if size == 3 {
			f = openFSM(t, t.TempDir())
		}
		res := replay(t, f, h.log, []int{size})
		var refused int
		for _, r := range res {
			if rr, ok := r.(*Result); ok && rr.Err != nil {
				var e *Error
				if !errors.As(rr.Err, &e) || e.Kind != KindPrecondition {
					t.Fatalf("replica refused %v", rr.Err)
				}
				refused++
			}
		}
		if refused != 1 {
			t.Fatalf("replica refused %d commands, want the one second bootstrap", refused)
		}
		if digestOf(t, f) != digestOf(t, h.f) {
			t.Fatalf("replica applying batches of %d differs from the original", size)
		}
	}
}
