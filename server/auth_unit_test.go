package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/ops"
)

// tokenFSM is an FSM fed directly, without Raft, to test the
// authenticator's view of it.
type tokenFSM struct {
	t     testing.TB
	f     *fsm.FSM
	index uint64
}

func newTokenFSM(t testing.TB) *tokenFSM {
	f, err := fsm.Open(fsm.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &tokenFSM{t: t, f: f}
}

func (h *tokenFSM) apply(at ledger.Time, cmd fsm.Command) {
	h.t.Helper()
	data, err := fsm.Encode(at, cmd)
	if err != nil {
		h.t.Fatal(err)
	}
	h.index++
	if _, err := fsm.Response[any](h.f.Apply(&raft.Log{Index: h.index, Term: 1, Type: raft.LogCommand, Data: data})); err != nil {
		h.t.Fatalf("%s: %v", cmd.Type(), err)
	}
}

func bearerCtx(secret string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(longfairv1.AuthorizationMetadataKey, "Bearer "+secret))
}

// TestAuthenticatorNeverServesARevokedTokenFromItsCache: the cache is
// checked against the FSM's ACL generation on every call, so the call
// right after a revocation is applied is refused.
func TestAuthenticatorNeverServesARevokedTokenFromItsCache(t *testing.T) {
	h := newTokenFSM(t)
	t0 := ledger.Time(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	h.apply(t0, &fsm.CreateUser{Name: "ann"})
	secret, err := ops.NewTokenSecret()
	if err != nil {
		t.Fatal(err)
	}
	h.apply(t0, &fsm.CreateToken{ID: "boot", SecretHash: ops.HashTokenSecret("admin-secret-0000001"), Role: fsm.RoleAdmin, Bootstrap: true})
	h.apply(t0, &fsm.CreateToken{ID: "ann1", SecretHash: ops.HashTokenSecret(secret), Role: fsm.RoleUser, User: "ann"})
	a := newAuthenticator(h.f)
	now := time.Unix(0, int64(t0)).Add(time.Minute)
	for range 3 { // the second and third calls are served from the cache
		id, err := a.authenticate(bearerCtx(secret), now)
		if err != nil || id != (Identity{TokenID: "ann1", Role: fsm.RoleUser, User: "ann"}) {
			t.Fatalf("authenticate = %+v, %v", id, err)
		}
	}
	h.apply(t0.Add(2*time.Minute), &fsm.RevokeToken{ID: "ann1"})
	_, err = a.authenticate(bearerCtx(secret), now)
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("after revocation: %v, want Unauthenticated saying revoked", err)
	}
}

func TestAuthenticatorRefusals(t *testing.T) {
	h := newTokenFSM(t)
	t0 := ledger.Time(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	expiring := "expiring-secret-000001"
	h.apply(t0, &fsm.CreateToken{ID: "exp", SecretHash: ops.HashTokenSecret(expiring), Role: fsm.RoleAdmin, ExpiresAt: t0.Add(time.Hour)})
	a := newAuthenticator(h.f)
	at := func(d time.Duration) time.Time { return time.Unix(0, int64(t0)).Add(d) }
	if _, err := a.authenticate(bearerCtx(expiring), at(59*time.Minute)); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	_, err := a.authenticate(bearerCtx(expiring), at(time.Hour))
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("at expiry: %v", err)
	}
	for name, md := range map[string]metadata.MD{
		"none":        {},
		"empty":       metadata.Pairs(longfairv1.AuthorizationMetadataKey, ""),
		"no scheme":   metadata.Pairs(longfairv1.AuthorizationMetadataKey, expiring),
		"basic":       metadata.Pairs(longfairv1.AuthorizationMetadataKey, "Basic "+expiring),
		"short":       metadata.Pairs(longfairv1.AuthorizationMetadataKey, "Bearer abc"),
		"two headers": metadata.Pairs(longfairv1.AuthorizationMetadataKey, "Bearer "+expiring, longfairv1.AuthorizationMetadataKey, "Bearer "+expiring),
		"unknown":     metadata.Pairs(longfairv1.AuthorizationMetadataKey, "Bearer unknown-secret-0000001"),
	} {
		_, err := a.authenticate(metadata.NewIncomingContext(context.Background(), md), at(0))
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
		if err != nil && strings.Contains(err.Error(), expiring) {
			t.Errorf("%s: the refusal quotes the secret: %v", name, err)
		}
	}
}

// TestEveryMethodHasAnAccessRule: a method added to the API without a
// rule would be admin-only; listing each one keeps that a decision.
func TestEveryMethodHasAnAccessRule(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if fd.Package() != "longfair.v1" {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				full := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				n++
				if _, ok := ruleOf(full); !ok {
					t.Errorf("%s has no access rule in ruleOf", full)
				}
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no longfair.v1 methods registered")
	}
	for _, m := range []string{"/longfair.v1.ACL/CreateToken", "/longfair.v1.Grants/CreateGrant", "/longfair.v1.Operator/RestoreSnapshot", "/longfair.v1.Ledger/Verify"} {
		if r, _ := ruleOf(m); r.access != accessAdmin {
			t.Errorf("%s is not admin-only", m)
		}
	}
	if r, _ := ruleOf("/grpc.health.v1.Health/Check"); r.access != accessOpen {
		t.Error("health checks need a token")
	}
}

// BenchmarkAuthenticate measures the per-call cost of resolving a token
// that is in the cache: header parsing, SHA-256 and the lookup.
func BenchmarkAuthenticate(b *testing.B) {
	h := newTokenFSM(b)
	t0 := ledger.Time(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	secret, _ := ops.NewTokenSecret()
	h.apply(t0, &fsm.CreateToken{ID: "a", SecretHash: ops.HashTokenSecret(secret), Role: fsm.RoleAdmin})
	a := newAuthenticator(h.f)
	ctx := bearerCtx(secret)
	now := time.Unix(0, int64(t0))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := a.authenticate(ctx, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/auth")
}
