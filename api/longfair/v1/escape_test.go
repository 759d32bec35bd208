package longfairv1

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The generated EscapeStrings reaches every string a message of the API
// can hold, as a walk through reflection does: for every message type,
// filled at random (fill: nested messages, lists, maps, oneof members,
// optional fields), EscapeStrings and the walk give equal messages.
func TestEscapeStringsReachesWhatReflectionReaches(t *testing.T) {
	// Like core.Escape, it leaves "" alone: a field it would set is one
	// reflection does not see.
	esc := func(s string) string {
		if s == "" {
			return s
		}
		return "E(" + s + ")"
	}
	r := rand.New(rand.NewPCG(3, 4))
	var types int
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if mt.Descriptor().ParentFile().Package() != "longfair.v1" {
			return true
		}
		types++
		if _, ok := mt.New().Interface().(stringEscaper); !ok {
			t.Errorf("%s has no EscapeStrings: run make proto", mt.Descriptor().FullName())
			return true
		}
		for range 200 {
			m := mt.New()
			fill(filler{r, false}, m, 0)
			want := proto.Clone(m.Interface())
			escapeByReflection(want.ProtoReflect(), esc)
			got := proto.Clone(m.Interface())
			got.(stringEscaper).EscapeStrings(esc)
			if !proto.Equal(got, want) {
				t.Fatalf("%s:\n got %v\nwant %v", mt.Descriptor().FullName(), got, want)
			}
		}
		return true
	})
	if types < 50 {
		t.Fatalf("only %d message types of longfair.v1 found", types)
	}
}

type stringEscaper interface {
	EscapeStrings(esc func(string) string)
}

// escapeByReflection replaces every string m holds by esc of it, through
// protobuf reflection: what the CLI did before EscapeStrings was
// generated, kept here as the reference.
func escapeByReflection(m protoreflect.Message, esc func(string) string) {
	var later []func() // a message must not change under Range
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				switch fd.Kind() {
				case protoreflect.StringKind:
					l.Set(i, protoreflect.ValueOfString(esc(l.Get(i).String())))
				case protoreflect.MessageKind:
					escapeByReflection(l.Get(i).Message(), esc)
				}
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, x protoreflect.Value) bool {
				switch fd.MapValue().Kind() {
				case protoreflect.StringKind:
					x = protoreflect.ValueOfString(esc(x.String()))
				case protoreflect.MessageKind:
					escapeByReflection(x.Message(), esc)
				}
				nk := k
				if fd.MapKey().Kind() == protoreflect.StringKind {
					nk = protoreflect.ValueOfString(esc(k.String())).MapKey()
				}
				later = append(later, func() { mp.Clear(k); mp.Set(nk, x) })
				return true
			})
		case fd.Kind() == protoreflect.StringKind:
			later = append(later, func() { m.Set(fd, protoreflect.ValueOfString(esc(v.String()))) })
		case fd.Kind() == protoreflect.MessageKind:
			escapeByReflection(v.Message(), esc)
		}
		return true
	})
	for _, f := range later {
		f()
	}
}
