package client

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// retryConn is the Client seen as a gRPC connection: generated stubs call
// it, and it sends each call through the retry loop.
type retryConn Client

var _ grpc.ClientConnInterface = (*retryConn)(nil)

// Invoke runs a unary call. The request is checked first (a malformed one
// never leaves the process), made idempotent, and retried while the
// cluster answers Unavailable or a server does not answer within the
// attempt deadline. A write that must never be repeated (a token) is
// retried only while it has not reached any server.
func (r *retryConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c := (*Client)(r)
	if v, ok := args.(longfairv1.Validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	args = withIdempotencyKey(args)
	never := longfairv1.NeverRepeat(args)
	ctx = c.readMode(ctx)
	uncertain := false
	err := c.do(ctx, method, !longfairv1.LongRunning(method), func(actx context.Context, ep *endpoint) error {
		var p peer.Peer
		start := time.Now()
		err := ep.conn.Invoke(actx, method, args, reply, append(opts, grpc.Peer(&p))...)
		// A retryable failure or a missed deadline may come after the
		// server applied the write (the answer was lost, leadership
		// moved before the commit was confirmed, or the server stopped
		// while it held the request), so its outcome is unknown. gRPC
		// names the peer only once the request was given to a
		// connection: without one it never left this process.
		maybeApplied := p.Addr != nil && (retryable(err) || status.Code(err) == codes.DeadlineExceeded)
		// A server that stalled holding a write that must not be
		// repeated ends the call. (Servers answer Unavailable before
		// they propose, as while no leader is elected, and retrying
		// that is safe; one that gave up on a stalled leader says the
		// outcome is unknown itself: server/forward.go.)
		if never && p.Addr != nil && status.Code(err) == codes.DeadlineExceeded && ctx.Err() == nil {
			return outcomeUnknown(method, ep.addr, time.Since(start).Round(time.Millisecond))
		}
		if never && status.Code(err) == codes.Unknown {
			return outcomeUnknownError{status.Convert(err)}
		}
		uncertain = uncertain || maybeApplied
		return err
	})
	if err != nil && uncertain {
		return c.recoverCreate(ctx, args, reply, err)
	}
	return err
}

// NewStream opens a stream, retrying while no server can take it. Errors
// after the stream is open are the caller's to handle (SaveSnapshot and
// RestoreSnapshot below do).
func (r *retryConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c := (*Client)(r)
	ctx = c.readMode(ctx)
	var cs grpc.ClientStream
	err := c.do(ctx, method, false, func(ctx context.Context, ep *endpoint) error {
		if err := c.connected(ctx, ep); err != nil {
			return err
		}
		var err error
		cs, err = ep.conn.NewStream(ctx, desc, method, opts...)
		return err
	})
	return cs, err
}

type readModeKey struct{}

// ConsistentRead returns a context whose reads are consistent (see
// WithConsistentReads), whatever the client's default.
func ConsistentRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, readModeKey{}, true)
}

// StaleRead returns a context whose reads may be served by any server from
// its replica, whatever the client's default.
func StaleRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, readModeKey{}, false)
}

// readMode adds the consistent-read metadata when it is asked for. Writes
// ignore it, so it need not know which methods read.
func (c *Client) readMode(ctx context.Context) context.Context {
	consistent := c.opts.consistent
	if v, ok := ctx.Value(readModeKey{}).(bool); ok {
		consistent = v
	}
	if !consistent {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, longfairv1.ConsistentReadMetadataKey, "true")
}
