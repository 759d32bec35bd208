package longfairv1

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The generated AppendProtoJSON writes what protojson writes in the
// gateway's mode, for every message of the API filled at random (strings
// that need escaping or are not UTF-8, NaN and the infinities, extreme
// integers, enum numbers without a name, timestamps and durations in and
// out of range, nil messages in lists, set and unset oneof members and
// optional fields): the same bytes when protojson writes any (less the
// spaces it may put after a comma), an error when it refuses.
func TestAppendProtoJSONWritesWhatProtojsonWrites(t *testing.T) {
	opts := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
	r := rand.New(rand.NewPCG(1, 2))
	var types int
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if mt.Descriptor().ParentFile().Package() != "longfair.v1" {
			return true
		}
		types++
		if _, ok := mt.New().Interface().(protoJSONAppender); !ok {
			t.Errorf("%s has no AppendProtoJSON: run make proto", mt.Descriptor().FullName())
			return true
		}
		var written, refused int
		for i := range 200 {
			m := mt.New()
			if i > 0 {
				// Every other message may hold values protojson refuses.
				fill(filler{r, i%2 == 0}, m, 0)
			}
			want, werr := opts.Marshal(m.Interface())
			got, err := m.Interface().(protoJSONAppender).AppendProtoJSON(nil)
			switch {
			case werr != nil:
				refused++
				if err == nil {
					t.Fatalf("%s: protojson refuses it (%v), AppendProtoJSON writes %s", mt.Descriptor().FullName(), werr, got)
				}
			case err != nil:
				t.Fatalf("%s: AppendProtoJSON refuses it (%v), protojson writes %s", mt.Descriptor().FullName(), err, want)
			default:
				written++
				if want := compact(t, want); !bytes.Equal(got, want) {
					t.Fatalf("%s:\n got %s\nwant %s", mt.Descriptor().FullName(), got, want)
				}
			}
		}
		if written < 100 || refused > 100 {
			t.Errorf("%s: %d of 200 random messages were written and %d refused: the filler makes too many bad values", mt.Descriptor().FullName(), written, refused)
		}
		return true
	})
	if types < 50 {
		t.Fatalf("only %d message types of longfair.v1 found", types)
	}
}

// filler makes random values, and bad ones now and then when bad is set.
type filler struct {
	*rand.Rand
	bad bool
}

// fill sets a random subset of m's fields to random values.
func fill(r filler, m protoreflect.Message, depth int) {
	d := m.Descriptor()
	switch d.FullName() {
	case "google.protobuf.Timestamp", "google.protobuf.Duration":
		secs, nanos := r.Int64N(12e10)-6e10, r.Int32N(1e9) // years 68 to 3871
		if d.FullName() == "google.protobuf.Duration" && secs < 0 {
			nanos = -nanos
		}
		if r.IntN(4) == 0 {
			nanos = nanos / 1e6 * 1e6 // the 3- and 6-digit forms
		}
		if r.bad && r.IntN(10) == 0 {
			secs, nanos = math.MaxInt64, -5 // refused
		}
		m.Set(d.Fields().ByName("seconds"), protoreflect.ValueOfInt64(secs))
		m.Set(d.Fields().ByName("nanos"), protoreflect.ValueOfInt32(nanos))
		return
	}
	fds := d.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if r.IntN(3) == 0 {
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && r.IntN(2) == 0 {
			continue // another member may win
		}
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range r.IntN(4) {
				if fd.Kind() == protoreflect.MessageKind {
					e := l.NewElement()
					if depth < 3 {
						fill(r, e.Message(), depth+1)
					}
					l.Append(e)
				} else {
					l.Append(scalar(r, fd))
				}
			}
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range r.IntN(5) {
				k := scalar(r, fd.MapKey()).MapKey()
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v := mp.NewValue()
					if depth < 3 {
						fill(r, v.Message(), depth+1)
					}
					mp.Set(k, v)
				} else {
					mp.Set(k, scalar(r, fd.MapValue()))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			v := m.NewField(fd)
			if depth < 3 {
				fill(r, v.Message(), depth+1)
			}
			m.Set(fd, v)
		default:
			m.Set(fd, scalar(r, fd))
		}
	}
}

var (
	strs   = []string{"", "a0042", "x\"y\\z/", "\n\t\r\b\f\x01\x1f\x7f", "é漢字🙂", "\u2028\u2029<>&", "\ufffd", "gpu"}
	floats = []float64{0, math.Copysign(0, -1), 1.5, -2.25, 1e-7, 1e-6, 1e20, 1e21, -1e300, 5e-324, 123456789.123456, 1.0 / 3}
)

// scalar is a random value of fd's scalar or enum kind, now and then one
// protojson refuses (a string that is not UTF-8) or writes specially.
func scalar(r filler, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.StringKind:
		if r.bad && r.IntN(20) == 0 {
			return protoreflect.ValueOfString("bad\xffutf8")
		}
		return protoreflect.ValueOfString(strs[r.IntN(len(strs))])
	case protoreflect.BytesKind:
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, -1, 7, math.MaxInt32, math.MinInt32, r.Int32()}[r.IntN(6)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, math.MaxUint32, r.Uint32()}[r.IntN(4)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, -1, 9, math.MaxInt64, math.MinInt64, r.Int64()}[r.IntN(6)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 1, math.MaxUint64, r.Uint64()}[r.IntN(4)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32([]float64{0, 0.1, -3.5e-7, 1e21, 3.4e38, math.NaN(), math.Inf(1), r.Float64()}[r.IntN(8)]))
	case protoreflect.DoubleKind:
		if r.IntN(6) == 0 {
			return protoreflect.ValueOfFloat64([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)])
		}
		if r.IntN(2) == 0 {
			return protoreflect.ValueOfFloat64(floats[r.IntN(len(floats))])
		}
		return protoreflect.ValueOfFloat64(r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20)))
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		if r.IntN(5) == 0 {
			return protoreflect.ValueOfEnum(999) // a number without a name
		}
		return protoreflect.ValueOfEnum(values.Get(r.IntN(values.Len())).Number())
	}
	panic("no random value for kind " + fd.Kind().String())
}

// Nil messages where protojson writes a message with every field unset:
// as the answer itself, in a list, in a oneof member.
func TestAppendProtoJSONOfNilMessages(t *testing.T) {
	opts := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
	for _, m := range []proto.Message{
		(*Job)(nil),
		&FairnessReport{Accounts: []*AccountFairness{nil, {Account: "a"}}},
		&WorkerMessage{Msg: &WorkerMessage_Hello{}},
	} {
		want, err := opts.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.(protoJSONAppender).AppendProtoJSON(nil)
		if want := compact(t, want); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s (%v)\nwant %s", m, got, err, want)
		}
	}
}

// BenchmarkJSONFairnessReport: a 1,000-account fairness report, the
// dashboard's biggest answer, written as JSON by protojson (what the
// gateway used before) and by the gateway's marshaler (the generated
// AppendProtoJSON). Reports MB/s of JSON written.
func BenchmarkJSONFairnessReport(b *testing.B) {
	r := fairnessReport(1000)
	opts := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
	gw := &jsonMarshaler{JSONPb: runtime.JSONPb{MarshalOptions: opts}}
	for _, c := range []struct {
		name    string
		marshal func() ([]byte, error)
	}{
		{"encoder=protojson", func() ([]byte, error) { return opts.Marshal(r) }},
		{"encoder=generated", func() ([]byte, error) { return gw.Marshal(r) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := c.marshal()
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}
