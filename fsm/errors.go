package fsm

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a refusal: what was wrong with a command or a request, and the
// gRPC code a server answers with. Refusals are part of the replicated
// result, so every server produces the same one for the same entry.
type Error struct {
	Code codes.Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// GRPCStatus lets status.FromError and status.Code see the code, so a server
// can return an *Error from a handler unchanged.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Msg) }

func refuse(code codes.Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error {
	return refuse(codes.InvalidArgument, format, args...)
}

func notFound(format string, args ...any) *Error {
	return refuse(codes.NotFound, format, args...)
}

// Code returns the gRPC code of err: the code of an *Error (or of anything
// carrying a gRPC status), OK for nil and Internal for anything else.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Internal
}
