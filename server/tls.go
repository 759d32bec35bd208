package server

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/hashicorp/raft"
	"github.com/longfair/longfair/ops/raftls"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// transportSecurity is how this server's connections are secured: the
// gRPC listener, the connections it dials (forwarding to the leader,
// reading task output from workers) and the Raft transport. Without TLS
// every part is plain TCP.
type transportSecurity struct {
	// tls is set when the server serves TLS.
	tls bool
	// verifiesIncoming is set when callers must show a certificate the
	// cluster's CA signed (mutual TLS).
	verifiesIncoming bool
	serverCreds      credentials.TransportCredentials
	dialCreds        credentials.TransportCredentials
	// raftServer and raftClient secure the Raft transport; raftServer
	// also secures the HTTP listener (http.go).
	raftServer, raftClient *tls.Config
}

// newTransportSecurity loads the configured certificates. A server dials
// its peers and workers with its own certificate, so mutual TLS holds
// between servers and from servers to workers too.
func newTransportSecurity(cfg Config) (transportSecurity, error) {
	if !cfg.TLS.Enabled() {
		return transportSecurity{dialCreds: insecure.NewCredentials()}, nil
	}
	server, err := cfg.TLS.ServerTLS()
	if err != nil {
		return transportSecurity{}, fmt.Errorf("server TLS: %w", err)
	}
	client, err := cfg.TLS.ClientTLS()
	if err != nil {
		return transportSecurity{}, fmt.Errorf("server TLS: %w", err)
	}
	return transportSecurity{
		tls:              true,
		verifiesIncoming: cfg.TLS.VerifiesIncoming(),
		serverCreds:      credentials.NewTLS(server),
		dialCreds:        credentials.NewTLS(client),
		raftServer:       server,
		raftClient:       client,
	}, nil
}

// serverOptions are the gRPC server options for the listener.
func (t transportSecurity) serverOptions() []grpc.ServerOption {
	if t.serverCreds == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(t.serverCreds)}
}

// newTLSTransport binds the Raft transport over TLS (raftls.StreamLayer):
// a peer without a certificate the CA signed cannot take part in Raft.
func newTLSTransport(cfg Config, advertise net.Addr, sec transportSecurity, netCfg *raft.NetworkTransportConfig) (*raft.NetworkTransport, error) {
	layer, err := raftls.NewStreamLayer(cfg.RaftAddr, advertise, sec.raftServer, sec.raftClient)
	if err != nil {
		return nil, fmt.Errorf("listen for raft over TLS on %s: %w (is the port in use? pick another with --raft-addr)", cfg.RaftAddr, err)
	}
	netCfg.Stream = layer
	return raft.NewNetworkTransportWithConfig(netCfg), nil
}
