package longfairv1

import "google.golang.org/grpc"

// Flow-control windows of every longfair connection, fixed rather than
// sized by gRPC's estimate of the bandwidth-delay product. That estimate
// sends a PING, which the peer answers, whenever a DATA frame arrives while
// no estimate is under way: on a connection that carries a small message
// now and then, as a worker's heartbeats and the leader's echoes do, that is
// one more write and read on each side per message. With 200 workers it was
// 45% of the leader's writes and reads, and fixed windows took a fifth off
// its idle CPU (e2e BenchmarkSimulatedWorkers; TestNoPingPerMessage).
//
// A stream may have StreamWindow bytes in flight: 80 MB/s at a 50 ms round
// trip, for a snapshot or a task's output read from afar, and what a
// dynamic window of a connection that busy would have grown to anyway. A
// connection may have ConnWindow, gRPC's own ceiling for a dynamic one.
const (
	StreamWindow int32 = 4 << 20
	ConnWindow   int32 = 16 << 20
)

// ServerOptions are what every longfair gRPC server uses: Codec and the
// fixed windows.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(Codec{}),
		grpc.StaticStreamWindowSize(StreamWindow),
		grpc.StaticConnWindowSize(ConnWindow),
	}
}

// DialOptions are what every longfair gRPC connection uses: Codec for its
// calls and the fixed windows.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(Codec{})),
		grpc.WithStaticStreamWindowSize(StreamWindow),
		grpc.WithStaticConnWindowSize(ConnWindow),
	}
}
