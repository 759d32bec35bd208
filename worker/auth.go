package worker

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
)

// dialOptions are how the worker calls servers: over TLS when the
// configuration has TLS files (showing its own certificate, for servers
// that verify incoming connections), and with its token as a bearer
// token on every call.
func (c Config) dialOptions() ([]grpc.DialOption, error) {
	opts, err := c.transportDialOptions()
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken{secret: c.Token, secure: c.TLS.Enabled()}))
	}
	return opts, nil
}

// transportDialOptions secure connections to the servers without the
// worker's token: the questions the worker asks about its callers carry
// the caller's token instead (caller_auth.go).
func (c Config) transportDialOptions() ([]grpc.DialOption, error) {
	creds := insecure.NewCredentials()
	if c.TLS.Enabled() {
		var err error
		if creds, err = c.TLS.ClientCredentials(); err != nil {
			return nil, fmt.Errorf("worker TLS: %w", err)
		}
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(creds)}, nil
}

// serverOptions secure the TaskOutput listener servers read task output
// from: TLS with the worker's certificate, and with a CA, only callers
// whose certificate it signed (the servers); and, TLS or not, every call
// carries a token the servers allow to read the job it names
// (caller_auth.go).
func (c Config) serverOptions(auth *callerAuth) ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(auth.unary), grpc.ChainStreamInterceptor(auth.stream)}
	if !c.TLS.Enabled() {
		return opts, nil
	}
	creds, err := c.TLS.ServerCredentials()
	if err != nil {
		return nil, fmt.Errorf("worker TLS: %w", err)
	}
	return append(opts, grpc.Creds(creds)), nil
}

// checkSecurity validates the token's shape and the TLS files.
func (c Config) checkSecurity() []error {
	var errs []error
	if c.Token != "" {
		if err := ops.CheckTokenSecret(c.Token); err != nil {
			errs = append(errs, fmt.Errorf("worker token: %w (give the secret of a worker token, from 'longfair acl token create --role worker')", err))
		}
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	} else if c.TLS.Enabled() && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		errs = append(errs, fmt.Errorf("tls: a worker serves task output to the servers over TLS, so it needs its own certificate and key: give --tls-cert and --tls-key with --tls-ca"))
	}
	return errs
}

// bearerToken sends the worker's token with every call.
type bearerToken struct {
	secret string
	secure bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{longfairv1.AuthorizationMetadataKey: "Bearer " + b.secret}, nil
}

// RequireTransportSecurity makes gRPC refuse to send the token over a
// plaintext connection once the worker is configured for TLS.
func (b bearerToken) RequireTransportSecurity() bool { return b.secure }
