package longfairv1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fairnessReport is a report of n accounts, maps and durations included.
func fairnessReport(n int) *FairnessReport {
	r := &FairnessReport{At: timestamppb.New(timestamppb.Now().AsTime()), Policy: "hmrf", Window: "decay:1h", Capacity: map[string]float64{"cpu": 4096, "mem": 1 << 44}}
	for i := range n {
		vec := func(x float64) map[string]float64 { return map[string]float64{"cpu": x, "mem": x * 3e9, "gpu": 0} }
		r.Accounts = append(r.Accounts, &AccountFairness{
			Account: fmt.Sprintf("a%04d", i), Weight: 1, Share: vec(1.5), Usage: vec(float64(i)), Baseline: vec(2), Allocation: vec(0.25),
			Beta: 0.5, HasBeta: i%2 == 0, PendingTasks: int64(i), RunningTasks: 3, SuAvailableMicroSu: -5, Waiting: durationpb.New(5e9), Group: "g/h",
		})
	}
	return r
}

// Codec writes and reads protobuf's bytes: what it writes, proto reads as
// the same message, and what proto writes, it reads so — for this
// package's messages (generated code) and any other (proto's).
func TestCodecIsProtobufOnTheWire(t *testing.T) {
	msgs := []proto.Message{
		fairnessReport(3),
		&SubmitJobRequest{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 7, Walltime: durationpb.New(3600e9),
			Command: []string{"sh", "-c", "échoé"}, Begin: timestamppb.Now(), RequestId: "r1"},
		&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, // not ours: proto's path
	}
	c := Codec{}
	for _, m := range msgs {
		data, err := c.Marshal(m)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		back := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), back); err != nil || !proto.Equal(back, m) {
			t.Fatalf("%T written by Codec reads back with proto as %v (%v)", m, back, err)
		}
		wire, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, got); err != nil || !proto.Equal(got, m) {
			t.Fatalf("%T written by proto reads back with Codec as %v (%v)", m, got, err)
		}
	}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Fatal("Codec marshalled a string")
	}
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte{0xff, 0xff})}, &FairnessReport{}); err == nil {
		t.Fatal("Codec read garbage as a report")
	}
}

// BenchmarkCodecFairnessReport: one round trip (marshal, unmarshal) of a
// 1,000-account fairness report, the dashboard's biggest read, with Codec
// and with proto (gRPC's default codec) in turn.
func BenchmarkCodecFairnessReport(b *testing.B) {
	r := fairnessReport(1000)
	for _, c := range []struct {
		name string
		rt   func() error
	}{
		{"codec=proto", func() error {
			data, err := proto.Marshal(r)
			if err != nil {
				return err
			}
			return proto.Unmarshal(data, &FairnessReport{})
		}},
		{"codec=vtproto", func() error {
			data, err := Codec{}.Marshal(r)
			if err != nil {
				return err
			}
			defer data.Free()
			return Codec{}.Unmarshal(data, &FairnessReport{})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.rt(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The gateway's JSON is runtime.JSONPb's, byte for byte (less the spaces
// protojson may put after a comma), for a message that grows and shrinks
// between answers (the size hint), for one protojson refuses, for a value
// that is not a message, and in a mode the generated code does not write.
func TestJSONMarshalerWritesWhatJSONPbWrites(t *testing.T) {
	for _, opts := range []protojson.MarshalOptions{
		{UseProtoNames: true, EmitUnpopulated: true},
		{UseProtoNames: true, EmitUnpopulated: true, UseEnumNumbers: true},
		{},
	} {
		ref := &runtime.JSONPb{MarshalOptions: opts}
		m := &jsonMarshaler{JSONPb: runtime.JSONPb{MarshalOptions: opts}}
		for _, v := range []any{fairnessReport(50), fairnessReport(3), fairnessReport(200), &Job{}, &Job{State: JobState_JOB_STATE_RUNNING, Name: "bad\xff"},
			&Job{State: JobState_JOB_STATE_RUNNING}, map[string]int{"a": 1}, "text"} {
			want, werr := ref.Marshal(v)
			got, err := m.Marshal(v)
			if (err != nil) != (werr != nil) || !bytes.Equal(compact(t, got), compact(t, want)) {
				t.Fatalf("%+v, %T: %.300q (%v), JSONPb writes %.300q (%v)", opts, v, got, err, want, werr)
			}
		}
	}
}

// compact is JSON without the spaces between its tokens (nil stays nil).
func compact(t *testing.T, data []byte) []byte {
	t.Helper()
	if data == nil {
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, data); err != nil {
		t.Fatalf("%v: %.300q", err, data)
	}
	return out.Bytes()
}
