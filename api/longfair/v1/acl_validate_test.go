package longfairv1

import (
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
