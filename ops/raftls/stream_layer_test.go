package raftls_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/raftls"
	"github.com/longfair/longfair/ops/tlstest"
)

// layer starts a TLS stream layer with cfg on a free loopback port.
func layer(t *testing.T, cfg ops.TLSConfig) *raftls.StreamLayer {
	t.Helper()
	server, err := cfg.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	client, err := cfg.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	l, err := raftls.NewStreamLayer("127.0.0.1:0", nil, server, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// echoOnce accepts one connection and echoes what it reads until it ends;
// the error of the accepted side comes back on the channel.
func echoOnce(l *raftls.StreamLayer) <-chan error {
	done := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.Copy(conn, conn)
		done <- err
	}()
	return done
}

func TestTLSStreamLayerCarriesBytesOnlyBetweenPeersOfOneCA(t *testing.T) {
	pki := tlstest.New(t, "raft")
	a, b := layer(t, pki.Issue("a")), layer(t, pki.Issue("b"))

	done := echoOnce(a)
	conn, err := b.Dial(raft.ServerAddress(a.Addr().String()), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("append entries")
	if _, err := conn.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != string(msg) {
		t.Fatalf("echo %q, %v", got, err)
	}
	conn.Close()
	<-done

	// A peer of another CA fails the handshake on both sides.
	other := layer(t, tlstest.New(t, "other").Issue("c"))
	done = echoOnce(a)
	if conn, err := other.Dial(raft.ServerAddress(a.Addr().String()), 2*time.Second); err == nil {
		conn.Close()
		t.Fatal("a peer of another CA completed the handshake")
	}
	if err := <-done; err == nil {
		t.Fatal("the listener accepted a peer of another CA")
	}

	// A plaintext peer gets nothing back.
	done = echoOnce(a)
	plain, err := net.Dial("tcp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.Write([]byte("plaintext raft rpc\n"))
	plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	if n, _ := plain.Read(buf); strings.Contains(string(buf[:n]), "plaintext raft rpc") {
		t.Fatal("a plaintext peer's bytes were echoed back")
	}
	if err := <-done; err == nil {
		t.Fatal("the listener served a plaintext peer")
	}
}

func TestTLSStreamLayerNeedsADiallableAddress(t *testing.T) {
	cfg := tlstest.New(t, "addr").Issue("a")
	server, _ := cfg.ServerTLS()
	client, _ := cfg.ClientTLS()
	if _, err := raftls.NewStreamLayer("0.0.0.0:0", nil, server, client); err == nil || !strings.Contains(err.Error(), "advertise") {
		t.Fatalf("listening on every interface without an advertise address: %v", err)
	}
	adv := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 7411}
	l, err := raftls.NewStreamLayer("0.0.0.0:0", adv, server, client)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Addr().String() != adv.String() {
		t.Fatalf("Addr = %v, want the advertise address %v", l.Addr(), adv)
	}
}
