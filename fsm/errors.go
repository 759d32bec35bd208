package fsm

import (
	"errors"
	"fmt"
)

// Kind says what sort of refusal an *Error is, in the ledger's own terms.
// The FSM knows nothing of the transport: package server maps each kind to
// the gRPC code a client receives (server/errors.go), in one place.
type Kind uint8

// The kinds of refusal. KindNone is the kind of no error (KindOf(nil)); no
// *Error carries it. Add a kind before kindEnd and give it a name in
// kindNames; the server's mapping test fails until it maps it too.
const (
	KindNone Kind = iota
	// KindInvalid: the command or request is malformed, whatever the state.
	KindInvalid
	// KindNotFound: it names something the ledger does not have.
	KindNotFound
	// KindExists: what it creates exists already, or its id was used for
	// something else.
	KindExists
	// KindPrecondition: the state does not allow it now (a limit is
	// reached, something still depends on it, nothing is left to do).
	KindPrecondition
	// KindInsufficientFunds: the account's available SU cannot cover it.
	KindInsufficientFunds
	// KindPermission: the user may not do it (not a member of the
	// account).
	KindPermission
	// KindUnavailable: this server cannot apply or read now (stopped,
	// closed, restoring); another server, or a later retry, may.
	KindUnavailable
	// KindInternal: the store failed; not the caller's fault.
	KindInternal

	kindEnd
)

var kindNames = [kindEnd]string{
	KindNone:              "none",
	KindInvalid:           "invalid",
	KindNotFound:          "not found",
	KindExists:            "exists",
	KindPrecondition:      "precondition",
	KindInsufficientFunds: "insufficient funds",
	KindPermission:        "permission",
	KindUnavailable:       "unavailable",
	KindInternal:          "internal",
}

func (k Kind) String() string {
	if k < kindEnd && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kinds lists every kind, KindNone first, so that a mapping of kinds can be
// checked to be total.
func Kinds() []Kind {
	out := make([]Kind, kindEnd)
	for k := range out {
		out[k] = Kind(k)
	}
	return out
}

// Error is a refusal: what was wrong with a command or a request, and its
// kind. Refusals are part of the replicated result, so every server
// produces the same one for the same entry. They travel to the proposer
// only inside its own process (raft's ApplyFuture.Response), never over the
// network as they are.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func refuse(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error {
	return refuse(KindInvalid, format, args...)
}

func notFound(format string, args ...any) *Error {
	return refuse(KindNotFound, format, args...)
}

// KindOf returns the kind of err: the kind of the *Error it is or wraps,
// KindNone for nil and KindInternal for anything else (a store failure).
func KindOf(err error) Kind {
	if err == nil {
		return KindNone
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
