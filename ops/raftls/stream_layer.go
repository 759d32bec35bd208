package raftls

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// StreamLayer is a raft.StreamLayer that carries Raft's TCP transport
// over TLS: it accepts only TLS connections (with a CA, only from peers
// whose certificate the CA signed) and dials peers with TLS, verifying
// their certificate. A plaintext peer fails the handshake and is dropped
// before Raft reads a byte from it.
type StreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	client    *tls.Config
}

var _ raft.StreamLayer = (*StreamLayer)(nil)

// NewStreamLayer listens on bind (host:port) with the server
// configuration and dials with the client one. advertise, when not nil,
// is the address peers dial; it, or the bound address, must be one they
// can reach (not 0.0.0.0).
func NewStreamLayer(bind string, advertise net.Addr, server, client *tls.Config) (*StreamLayer, error) {
	if server == nil || client == nil {
		return nil, errors.New("raft over TLS needs both a server and a client TLS configuration")
	}
	tcp, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	l := &StreamLayer{ln: tls.NewListener(tcp, server), advertise: advertise, client: client}
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || addr.IP == nil || addr.IP.IsUnspecified() {
		tcp.Close()
		return nil, fmt.Errorf("raft address %v cannot be dialled by peers: set an advertise address", l.Addr())
	}
	return l, nil
}

// Accept returns the next connection. Its TLS handshake runs on the first
// read, in Raft's per-connection goroutine, so a slow or plaintext peer
// never holds up the accept loop.
func (l *StreamLayer) Accept() (net.Conn, error) { return l.ln.Accept() }

// Close stops listening.
func (l *StreamLayer) Close() error { return l.ln.Close() }

// Addr is the address peers dial.
func (l *StreamLayer) Addr() net.Addr {
	if l.advertise != nil {
		return l.advertise
	}
	return l.ln.Addr()
}

// Dial connects to a peer and completes the TLS handshake within timeout.
func (l *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", string(address), l.client)
	if err != nil {
		return nil, fmt.Errorf("raft TLS connection to %s: %w", address, err)
	}
	return conn, nil
}
