package membership

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// receive waits for the next packet, failing the test after a few seconds.
func receive(t *testing.T, tr *transport) *memberlist.Packet {
	t.Helper()
	select {
	case p := <-tr.PacketCh():
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no packet arrived")
		return nil
	}
}

// loopback starts a transport on a loopback port the kernel picks and
// returns it with the host:port it advertises; the test's cleanup shuts
// it down.
func loopback(t *testing.T) (*transport, string) {
	t.Helper()
	tr, err := listen("127.0.0.1", 0, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Shutdown() })
	ip, port, err := tr.FinalAdvertiseAddr("", 0)
	if err != nil {
		t.Fatal(err)
	}
	return tr, net.JoinHostPort(ip.String(), strconv.Itoa(port))
}

// boundPort is the port tr bound, TCP and UDP.
func boundPort(tr *transport) int { return tr.tcp.Addr().(*net.TCPAddr).Port }

func TestEachPacketKeepsItsOwnBytes(t *testing.T) {
	tr, to := loopback(t)
	sender, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	dst, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		t.Fatal(err)
	}
	first, second := bytes.Repeat([]byte{'a'}, 1400), bytes.Repeat([]byte{'b'}, 300)
	for _, b := range [][]byte{first, second} {
		if _, err := sender.WriteTo(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	p1 := receive(t, tr)
	// The transport reads the second packet while memberlist still holds
	// the first: the first must not share its read buffer.
	p2 := receive(t, tr)
	if !bytes.Equal(p1.Buf, first) || !bytes.Equal(p2.Buf, second) {
		t.Fatalf("packets arrived as %d bytes %q… and %d bytes %q…, want 1400 a's then 300 b's", len(p1.Buf), p1.Buf[:1], len(p2.Buf), p2.Buf[:1])
	}
	for _, p := range []*memberlist.Packet{p1, p2} {
		if cap(p.Buf) > 2*len(p.Buf) {
			t.Errorf("a %d-byte packet holds a %d-byte buffer: each packet should cost its own size, not the largest datagram's", len(p.Buf), cap(p.Buf))
		}
		if p.From.String() != sender.LocalAddr().String() {
			t.Errorf("packet from %v, want the sender %v", p.From, sender.LocalAddr())
		}
		if p.Timestamp.IsZero() {
			t.Error("packet has no arrival time (memberlist times its probes with it)")
		}
	}
}

func TestStreamsAndPacketsShareOnePort(t *testing.T) {
	a, _ := loopback(t)
	b, addrB := loopback(t)

	if _, err := a.WriteToAddress([]byte("ping"), memberlist.Address{Addr: addrB, Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if p := receive(t, b); string(p.Buf) != "ping" {
		t.Fatalf("b got %q over UDP, want ping", p.Buf)
	}
	conn, err := a.DialAddressTimeout(memberlist.Address{Addr: addrB, Name: "b"}, 5*time.Second)
	if err != nil {
		t.Fatalf("dial b's stream port: %v", err)
	}
	defer conn.Close()
	select {
	case in := <-b.StreamCh():
		in.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("b never handed the TCP connection to memberlist")
	}

	// An advertised address overrides the one bound.
	adv, advPort, err := b.FinalAdvertiseAddr("10.0.0.7", 7412)
	if err != nil || adv.String() != "10.0.0.7" || advPort != 7412 {
		t.Errorf("advertise 10.0.0.7:7412 gave %v:%d, %v", adv, advPort, err)
	}
	if _, _, err := b.FinalAdvertiseAddr("not-an-ip", 7412); err == nil {
		t.Error("an advertise address that is not an IP was accepted")
	}
}

func TestShutdownEndsWhileNothingIsRead(t *testing.T) {
	tr, to := loopback(t)
	port := boundPort(tr)
	// A packet and a connection that nobody takes from the channels.
	if _, err := tr.WriteTo([]byte("x"), to); err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", to, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // both loops are now blocked handing over
	done := make(chan struct{})
	go func() {
		tr.Shutdown()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return while a packet and a connection waited to be taken")
	}
	// The port is free again.
	again, err := listen("127.0.0.1", port, quietLogger())
	if err != nil {
		t.Fatalf("the port is still held after Shutdown: %v", err)
	}
	again.Shutdown()
}

func TestListenRefusesAHostName(t *testing.T) {
	// memberlist's own transport reads a host name as no address and
	// binds every interface; a gossip pool open on every network is not
	// what "localhost" asks for.
	if tr, err := listen("localhost", 0, quietLogger()); err == nil {
		tr.Shutdown()
		t.Fatal("a host name was accepted as the bind address")
	}
}

// BenchmarkPacketReceive is one gossip-sized packet (1,000 bytes) sent over
// loopback and taken from the transport, by this transport and, beside it
// as the baseline, memberlist's own NetTransport: the bytes allocated per
// packet are what a member's collector must reclaim.
func BenchmarkPacketReceive(b *testing.B) {
	for _, c := range []struct {
		name string
		make func(b *testing.B) (memberlist.Transport, int)
	}{
		{"transport=longfair", func(b *testing.B) (memberlist.Transport, int) {
			tr, err := listen("127.0.0.1", 0, quietLogger())
			if err != nil {
				b.Fatal(err)
			}
			return tr, boundPort(tr)
		}},
		{"transport=memberlist", func(b *testing.B) (memberlist.Transport, int) {
			nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}, Logger: log.New(io.Discard, "", 0)})
			if err != nil {
				b.Fatal(err)
			}
			return nt, nt.GetAutoBindPort()
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tr, port := c.make(b)
			defer tr.Shutdown()
			sender, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer sender.Close()
			dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
			msg := bytes.Repeat([]byte{'m'}, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := sender.WriteTo(msg, dst); err != nil {
					b.Fatal(err)
				}
				select {
				case p := <-tr.PacketCh():
					if len(p.Buf) != len(msg) {
						b.Fatalf("got %d bytes, sent %d", len(p.Buf), len(msg))
					}
				case <-time.After(5 * time.Second):
					b.Fatal("packet lost on loopback")
				}
			}
		})
	}
}
