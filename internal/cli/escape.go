package cli

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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
		if m, ok := reply.(proto.Message); ok && err == nil {
			escapeMessage(m.ProtoReflect())
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
	if msg, ok := m.(proto.Message); ok && err == nil {
		escapeMessage(msg.ProtoReflect())
	}
	return err
}

// escapeMessage replaces, in place, every string m holds — fields, list
// elements, map keys and values, at any depth — by core.Escape of it.
// Bytes fields (task output) are left alone: they are the job's own
// output, printed as it wrote it.
func escapeMessage(m protoreflect.Message) {
	// Changes are made after Range: a message must not change under it.
	var later []func()
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				switch fd.Kind() {
				case protoreflect.StringKind:
					if s := l.Get(i).String(); core.Escape(s) != s {
						later = append(later, func() { l.Set(i, protoreflect.ValueOfString(core.Escape(s))) })
					}
				case protoreflect.MessageKind, protoreflect.GroupKind:
					escapeMessage(l.Get(i).Message())
				}
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, x protoreflect.Value) bool {
				nv := x
				switch fd.MapValue().Kind() {
				case protoreflect.StringKind:
					nv = protoreflect.ValueOfString(core.Escape(x.String()))
				case protoreflect.MessageKind, protoreflect.GroupKind:
					escapeMessage(x.Message())
				}
				nk := k
				if fd.MapKey().Kind() == protoreflect.StringKind {
					nk = protoreflect.ValueOfString(core.Escape(k.String())).MapKey()
				}
				if nk.Interface() != k.Interface() || fd.MapValue().Kind() == protoreflect.StringKind && nv.String() != x.String() {
					later = append(later, func() { mp.Clear(k); mp.Set(nk, nv) })
				}
				return true
			})
		case fd.Kind() == protoreflect.StringKind:
			if s := v.String(); core.Escape(s) != s {
				later = append(later, func() { m.Set(fd, protoreflect.ValueOfString(core.Escape(s))) })
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			escapeMessage(v.Message())
		}
		return true
	})
	for _, f := range later {
		f()
	}
}
