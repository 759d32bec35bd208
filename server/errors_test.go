package server

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// The gRPC code clients receive for each kind of refusal. It is the
// contract of the API (clients, the CLI and the docs rely on it): a change
// here changes what users see.
var wantCodes = map[fsm.Kind]codes.Code{
	fsm.KindNone:              codes.OK,
	fsm.KindInvalid:           codes.InvalidArgument,
	fsm.KindNotFound:          codes.NotFound,
	fsm.KindExists:            codes.AlreadyExists,
	fsm.KindPrecondition:      codes.FailedPrecondition,
	fsm.KindInsufficientFunds: codes.ResourceExhausted,
	fsm.KindPermission:        codes.PermissionDenied,
	fsm.KindUnavailable:       codes.Unavailable,
	fsm.KindInternal:          codes.Internal,
}

// Every kind the FSM has maps to a code, the one the table says: a kind
// added to fsm without a mapping here fails.
func TestCodeOfTotal(t *testing.T) {
	for _, k := range fsm.Kinds() {
		want, listed := wantCodes[k]
		if !listed {
			t.Errorf("kind %v has no code in wantCodes: decide which gRPC code clients receive for it", k)
		}
		got, ok := codeOf(k)
		if !ok {
			t.Errorf("codeOf does not map kind %v: add it to server/errors.go", k)
			continue
		}
		if listed && got != want {
			t.Errorf("codeOf(%v) = %v, want %v", k, got, want)
		}
	}
	if len(wantCodes) != len(fsm.Kinds()) {
		t.Errorf("wantCodes lists %d kinds, fsm has %d", len(wantCodes), len(fsm.Kinds()))
	}
}

// statusError keeps the refusal's whole message and gives it its kind's
// code, as a server answered when the refusal carried a gRPC code itself;
// other errors pass through unchanged.
func TestStatusError(t *testing.T) {
	refusal := &fsm.Error{Kind: fsm.KindInsufficientFunds, Msg: "insufficient SU: account \"phys\" cannot cover hold"}
	wrapped := fmt.Errorf("submit-job: %w", refusal)
	st := status.Error(codes.Aborted, "a restore replaced the state; retry")
	plain := errors.New("disk full")
	cases := []struct {
		name     string
		err      error
		wantCode codes.Code
		wantMsg  string
		same     bool // returned as it is
	}{
		{"refusal", refusal, codes.ResourceExhausted, refusal.Msg, false},
		{"wrapped refusal", wrapped, codes.ResourceExhausted, wrapped.Error(), false},
		{"status", st, codes.Aborted, "a restore replaced the state; retry", true},
		{"wrapped status", fmt.Errorf("raft: %w", st), codes.Aborted, "raft: " + st.Error(), true},
		{"other error", plain, codes.Unknown, "disk full", true},
		{"refusal without a kind", &fsm.Error{Msg: "bug"}, codes.Internal, "bug", false},
	}
	for _, c := range cases {
		got := statusError(c.err)
		if c.same && got != c.err {
			t.Errorf("%s: statusError changed %v into %v", c.name, c.err, got)
		}
		s := status.Convert(got)
		if s.Code() != c.wantCode || s.Message() != c.wantMsg {
			t.Errorf("%s: status %v %q, want %v %q", c.name, s.Code(), s.Message(), c.wantCode, c.wantMsg)
		}
	}
	if statusError(nil) != nil {
		t.Error("statusError(nil) is not nil")
	}
}
