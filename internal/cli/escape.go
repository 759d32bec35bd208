package cli

import (
	"context"

	"google.golang.org/grpc"

	"github.com/longfair/longfair/core"
)

// Text from the cluster is escaped before it is printed: a name, note or
// message holding a control character (stored by an older release, or
// sent by a server that does not check) must show as \x1b, not move the
// cursor or clear the screen. core.Escape is the one escaping helper; it
// runs on every string of every reply (escapeReplies, for table, CSV and
// plain output — JSON output encodes such characters itself), on every
// table and CSV cell (writeTable) and on every error message (dispatch).

// escapeReplies returns dial options that escape every string of every
// reply, unary or streamed, before a command sees it.
func escapeReplies() []grpc.DialOption {
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			escapeReply(reply)
		}
		return err
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return escapingStream{s}, nil
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}

type escapingStream struct{ grpc.ClientStream }

func (s escapingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		escapeReply(m)
	}
	return err
}

// stringEscaper is a message with the EscapeStrings that
// protoc-gen-go-escape generates for every message of the API (package
// pbescape): it reaches every string at any depth, list elements and map
// keys included, without the reflection whose lazy set-up cost a shell's
// `longfair submit` 1 to 10 ms.
type stringEscaper interface {
	EscapeStrings(esc func(string) string)
}

// escapeReply replaces, in place, every string m holds by core.Escape of
// it. Bytes fields (task output) are left alone: they are the job's own
// output, printed as it wrote it. A message without EscapeStrings is not
// the API's (health's, reflection's) and is left as it is; every message
// of the API has one (its TestEscapeStringsReachesWhatReflectionReaches).
func escapeReply(m any) {
	if e, ok := m.(stringEscaper); ok {
		e.EscapeStrings(core.Escape)
	}
}
