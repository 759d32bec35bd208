package server

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// codeOf is the gRPC code a client receives for a refusal of kind k: the
// one place where the ledger's kinds of refusal meet the transport. ok is
// false for a kind it does not know (TestCodeOfTotal keeps it total).
func codeOf(k fsm.Kind) (code codes.Code, ok bool) {
	switch k {
	case fsm.KindNone:
		return codes.OK, true
	case fsm.KindInvalid:
		return codes.InvalidArgument, true
	case fsm.KindNotFound:
		return codes.NotFound, true
	case fsm.KindExists:
		return codes.AlreadyExists, true
	case fsm.KindPrecondition:
		return codes.FailedPrecondition, true
	case fsm.KindInsufficientFunds:
		return codes.ResourceExhausted, true
	case fsm.KindPermission:
		return codes.PermissionDenied, true
	case fsm.KindUnavailable:
		return codes.Unavailable, true
	case fsm.KindInternal:
		return codes.Internal, true
	}
	return codes.Internal, false
}

// statusError turns a refusal of the FSM (an *fsm.Error, or an error that
// wraps one) into the gRPC status a client receives: the code of its kind
// and err's whole message. A gRPC status error, and any other error, is
// returned as it is.
func statusError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	var fe *fsm.Error
	if !errors.As(err, &fe) {
		return err
	}
	code, _ := codeOf(fe.Kind)
	if code == codes.OK {
		// A refusal is never a success; an *fsm.Error of KindNone is a bug.
		code = codes.Internal
	}
	return status.Error(code, err.Error())
}

// statusUnary and statusStream, the outermost interceptors, answer every
// refusal of the FSM a handler (or an inner interceptor) returns with its
// gRPC status, so no read or write path can miss the mapping.
func statusUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	return resp, statusError(err)
}

func statusStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return statusError(handler(srv, ss))
}
