package client

import (
	"context"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// bearer sends the token in the authorization metadata of every call.
type bearer struct {
	token string
	// secure is set when the connection has transport security; gRPC then
	// refuses to send the token over a connection without it.
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{longfairv1.AuthorizationMetadataKey: "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
