package longfairv1

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// Codec is the gRPC codec of longfair's servers, workers and clients. A
// message of this package is encoded by the code vtprotobuf generated for
// it (*_vtproto.pb.go: MarshalVT, UnmarshalVT), any other (health,
// reflection) by proto. The bytes are protobuf's either way, so a peer
// with gRPC's default codec (grpcurl, any other client) reads and writes
// the same messages; only the work differs: no reflection, and for a
// fairness report of 1,000 accounts a third of the time and a fifth of
// the allocations of proto's (BenchmarkCodecFairnessReport).
type Codec struct{}

// vtMessage is a message with vtprotobuf's generated methods.
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
	UnmarshalVT([]byte) error
}

// Name is the content subtype gRPC negotiates: the default codec's, as the
// encoding is the same.
func (Codec) Name() string { return "proto" }

// Marshal encodes v into a buffer of gRPC's pool when it is large enough
// to be worth pooling, as gRPC's own codec does.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMessage)
	if !ok {
		pm, ok := v.(proto.Message)
		if !ok {
			return nil, fmt.Errorf("marshal: %T is not a protobuf message", v)
		}
		b, err := proto.Marshal(pm)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		b := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(b); err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	pool := mem.DefaultBufferPool()
	b := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT((*b)[:size]); err != nil {
		pool.Put(b)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(b, pool)}, nil
}

// Unmarshal decodes data into v. The generated code copies what it keeps
// (strings, bytes), so the pooled buffer is freed on return.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	if m, ok := v.(vtMessage); ok {
		return m.UnmarshalVT(buf.ReadOnlyData())
	}
	pm, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("unmarshal: %T is not a protobuf message", v)
	}
	return proto.Unmarshal(buf.ReadOnlyData(), pm)
}
