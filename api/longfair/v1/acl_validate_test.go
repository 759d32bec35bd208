package longfairv1

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestCreateTokenRequestValidation(t *testing.T) {
	good := []*CreateTokenRequest{
		{Role: TokenRole_TOKEN_ROLE_ADMIN},
		{Role: TokenRole_TOKEN_ROLE_ADMIN, User: "ops", Description: "on-call"},
		{Role: TokenRole_TOKEN_ROLE_USER, User: "ann", Ttl: durationpb.New(90 * 24 * time.Hour)},
		{Role: TokenRole_TOKEN_ROLE_WORKER, Ttl: durationpb.New(time.Second)},
		{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "c01"},
		{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "mic-07.rack3.example.org:7411"},
		{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "n" + strings.Repeat("x", MaxNodeIDBytes-1)},
	}
	for _, r := range good {
		if err := r.Validate(); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	for _, c := range []struct {
		req   *CreateTokenRequest
		words string
	}{
		{&CreateTokenRequest{}, "role"},
		{&CreateTokenRequest{Role: 9}, "role"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_USER}, "needs user"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_USER, User: "a b"}, "user"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_ADMIN, Description: strings.Repeat("x", MaxTokenDescriptionBytes+1)}, "description"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_ADMIN, Ttl: durationpb.New(time.Millisecond)}, "one second"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_ADMIN, Ttl: durationpb.New(-time.Hour)}, "ttl"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_ADMIN, Ttl: durationpb.New(MaxTokenTTL + time.Hour)}, "ttl"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_ADMIN, Node: "c01"}, "only WORKER tokens"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_USER, User: "ann", Node: "c01"}, "only WORKER tokens"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "-c01"}, "node"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "c 01"}, "node"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_WORKER, Node: "c01/x"}, "node"},
		{&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_WORKER, Node: strings.Repeat("x", MaxNodeIDBytes+1)}, "node"},
	} {
		err := c.req.Validate()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: %v, want InvalidArgument saying %q", c.req, err, c.words)
		}
	}
	if err := (&RevokeTokenRequest{}).Validate(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("RevokeToken without id: %v", err)
	}
	if err := (&ListTokensRequest{PageSize: -1}).Validate(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ListTokens with a negative page size: %v", err)
	}
}

// CheckNodeID (which the worker's --node-id check calls too) accepts exactly
// the ids of the documented rule, written here as a regular expression.
func TestCheckNodeIDFollowsTheDocumentedRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,254}$`)
	ids := []string{"", "c01", "C", "9", "a.b_c-d:e", ".a", "_a", ":a", "-a", "a b", "a/b", "a\x00", "é", "aé",
		strings.Repeat("a", MaxNodeIDBytes), strings.Repeat("a", MaxNodeIDBytes+1)}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09._:-/ @é"
	for range 2000 {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		ids = append(ids, string(b))
	}
	for _, id := range ids {
		err := CheckNodeID("node", id)
		if (err == nil) != rule.MatchString(id) {
			t.Fatalf("node id %q: CheckNodeID says %v, the documented rule says valid=%v", id, err, rule.MatchString(id))
		}
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("node id %q: %v, want InvalidArgument", id, err)
		}
	}
}
