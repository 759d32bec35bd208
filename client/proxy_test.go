package client_test

import (
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// rawCodec passes messages through as bytes, so the proxy needs no types.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// lossyProxy is a gRPC proxy in front of a real server. It forwards every
// unary call, and can drop the answer to a call after the server has
// served it, the way a broken connection or a leader change loses an
// acknowledgement. It records the metadata of every call.
type lossyProxy struct {
	addr string
	mu   sync.Mutex
	// drop says whether to lose the answer to the n-th call (from 1) of
	// a method.
	drop func(method string, n int) bool
	// hang says whether to hold the answer to the n-th call of a method
	// until the caller gives up, the way a server that stops (SIGSTOP)
	// after applying a write never answers.
	hang  func(method string, n int) bool
	calls map[string]int
	md    []metadata.MD
}

func startProxy(t testing.TB, target string, drop func(method string, n int) bool) *lossyProxy {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{addr: lis.Addr().String(), drop: drop, calls: map[string]int{}}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(ss)
		var req, resp []byte
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		md, _ := metadata.FromIncomingContext(ss.Context())
		p.mu.Lock()
		p.calls[method]++
		n := p.calls[method]
		p.md = append(p.md, md.Copy())
		p.mu.Unlock()
		out := metadata.MD{}
		for k, v := range md {
			if k == longfairv1.AuthorizationMetadataKey || k == longfairv1.ConsistentReadMetadataKey {
				out[k] = v
			}
		}
		ctx := metadata.NewOutgoingContext(ss.Context(), out)
		if err := conn.Invoke(ctx, method, &req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
			return err
		}
		p.mu.Lock()
		hang := p.hang
		p.mu.Unlock()
		if hang != nil && hang(method, n) {
			<-ss.Context().Done()
			return ss.Context().Err()
		}
		if p.drop != nil && p.drop(method, n) {
			return status.Error(codes.Unavailable, "proxy lost the answer")
		}
		return ss.SendMsg(&resp)
	}))
	go srv.Serve(lis)
	t.Cleanup(func() {
		srv.Stop()
		conn.Close()
	})
	return p
}

// hangOn sets which answers the proxy holds back (see lossyProxy.hang).
func (p *lossyProxy) hangOn(hang func(method string, n int) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hang = hang
}

func (p *lossyProxy) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

func (p *lossyProxy) metadata() []metadata.MD {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]metadata.MD(nil), p.md...)
}
