package longfairv1

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestNoPingPerMessage: a worker's stream carries a heartbeat now and then
// and the leader echoes each. Over ServerOptions and DialOptions those
// messages travel without a PING each way, which gRPC's default (a window
// sized by estimating the bandwidth-delay product) sends for nearly every
// one, as the same exchange over the default windows shows.
func TestNoPingPerMessage(t *testing.T) {
	const beats = 20
	codecOnly := []grpc.ServerOption{grpc.ForceServerCodecV2(Codec{})}
	dialCodecOnly := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.ForceCodecV2(Codec{}))}

	def := exchangeBeats(t, beats, codecOnly, dialCodecOnly)
	if def.pings[toServer] == 0 || def.pings[toClient] == 0 {
		t.Fatalf("with gRPC's default windows, %d heartbeats went with %d PINGs to the server and %d to the client: gRPC no longer pings per message, so this test shows nothing (and the fixed windows may no longer be needed)", beats, def.pings[toServer], def.pings[toClient])
	}
	got := exchangeBeats(t, beats, ServerOptions(), DialOptions())
	for dir, name := range []string{"to the server", "to the client"} {
		if got.data[dir] < beats {
			t.Errorf("%d DATA frames went %s, want at least the %d heartbeats", got.data[dir], name, beats)
		}
		if got.pings[dir] != 0 {
			t.Errorf("%d heartbeats went with %d PINGs %s, want none (with gRPC's default windows: %d)", beats, got.pings[dir], name, def.pings[dir])
		}
	}
}

// Directions of the frames a frameCount counts.
const (
	toServer = iota
	toClient
)

// frameCount is how many DATA and PING frames went each way on a
// connection.
type frameCount struct {
	data, pings [2]int
}

// exchangeBeats opens a Workers stream to a server whose Connect echoes
// every heartbeat, sends n heartbeats a few milliseconds apart, each after
// the last one's echo, and counts the frames the server's connection read
// and wrote.
func exchangeBeats(t *testing.T, n int, serverOpts []grpc.ServerOption, dialOpts []grpc.DialOption) frameCount {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: lis}
	srv := grpc.NewServer(serverOpts...)
	RegisterWorkersServer(srv, echoWorkers{})
	go func() { _ = srv.Serve(counting) }()
	defer srv.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // on a failure; closed below before the counts are read
	stream, err := NewWorkersClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq := range uint64(n) {
		if err := stream.Send(&WorkerMessage{Msg: &WorkerMessage_Heartbeat{Heartbeat: &Heartbeat{Seq: seq + 1}}}); err != nil {
			t.Fatalf("send heartbeat %d: %v", seq+1, err)
		}
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("echo of heartbeat %d: %v", seq+1, err)
		}
		if got := m.GetHeartbeat().GetSeq(); got != seq+1 {
			t.Fatalf("echo of heartbeat %d says %d", seq+1, got)
		}
		time.Sleep(5 * time.Millisecond) // a ping sent for this one is answered before the next
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("the stream ended with %v, want its end", err)
	}
	conn.Close()
	srv.Stop()
	return counting.wait()
}

// echoWorkers echoes each heartbeat, as the leader does.
type echoWorkers struct{ UnimplementedWorkersServer }

func (echoWorkers) Connect(stream grpc.BidiStreamingServer[WorkerMessage, LeaderMessage]) error {
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&LeaderMessage{Msg: &LeaderMessage_Heartbeat{Heartbeat: &Heartbeat{Seq: m.GetHeartbeat().GetSeq()}}}); err != nil {
			return err
		}
	}
}

// countingListener parses the HTTP/2 frames its connections read and write.
type countingListener struct {
	net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	counts frameCount
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	in, out := l.parse(toServer), l.parse(toClient)
	return &countingConn{Conn: c, in: in, out: out}, nil
}

// parse counts the frames written to the returned pipe, going dir; those
// to the server follow the client's connection preface.
func (l *countingListener) parse(dir int) *io.PipeWriter {
	r, w := io.Pipe()
	l.wg.Go(func() {
		defer r.Close()
		if dir == toServer {
			if _, err := io.ReadFull(r, make([]byte, len(http2.ClientPreface))); err != nil {
				return
			}
		}
		fr := http2.NewFramer(io.Discard, r)
		fr.SetMaxReadFrameSize(1 << 24)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			l.mu.Lock()
			switch f.(type) {
			case *http2.DataFrame:
				l.counts.data[dir]++
			case *http2.PingFrame:
				l.counts.pings[dir]++
			}
			l.mu.Unlock()
		}
	})
	return w
}

// wait returns the counts once every connection has closed.
func (l *countingListener) wait() frameCount {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts
}

// countingConn copies what it reads to in and what it writes to out.
type countingConn struct {
	net.Conn
	in, out *io.PipeWriter
	once    sync.Once
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	_, _ = c.in.Write(p[:n])
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	_, _ = c.out.Write(p[:n])
	return n, err
}

func (c *countingConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		c.out.Close()
	})
	return c.Conn.Close()
}
