package cli

import (
	"context"
	"os"

	"google.golang.org/grpc"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
)

// EnvMungeSocket names the munged socket the CLI authenticates through
// when it has no token; unset is MUNGE's default socket.
const EnvMungeSocket = "LONGFAIR_MUNGE_SOCKET"

// defaultMungeSocket is where Debian's munged listens.
const defaultMungeSocket = "/run/munge/munge.socket.2"

// mungeSocket is the socket of a munged the CLI can use, or "" when
// there is none: on the cluster's own nodes a user needs no token.
func mungeSocket() string {
	s := os.Getenv(EnvMungeSocket)
	if s == "" {
		s = defaultMungeSocket
	}
	if fi, err := os.Stat(s); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return ""
	}
	return s
}

// mungeCreds sends a fresh MUNGE credential of the calling Unix user
// with every call: munged refuses a credential decoded twice, so each
// call (and each retry) needs its own.
type mungeCreds struct{ socket string }

func (m mungeCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	cred, err := ops.MungeCredential(ctx, m.socket)
	if err != nil {
		return nil, err
	}
	return map[string]string{longfairv1.AuthorizationMetadataKey: ops.MungeScheme + " " + cred}, nil
}

// RequireTransportSecurity is false: a credential is bound to its uid,
// expires within minutes and is refused when replayed.
func (mungeCreds) RequireTransportSecurity() bool { return false }

func mungeDialOption(socket string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(mungeCreds{socket: socket})
}
