package cli

import (
	"context"
	"os"

	"google.golang.org/grpc"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
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

// mungeAuth reports whether the CLI authenticates by MUNGE: it has no
// token and finds a munged.
func (f *clientFlags) mungeAuth() bool {
	return f.resolvedToken() == "" && mungeSocket() != ""
}

// mungeUser is the longfair user the servers take the caller's MUNGE
// credential for.
func mungeUser(ctx context.Context, c *client.Client, f *clientFlags) (string, error) {
	cctx, cancel := f.callContext(ctx)
	defer cancel()
	tok, err := c.ACL().WhoAmI(cctx, &longfairv1.WhoAmIRequest{})
	if err != nil {
		return "", err
	}
	return tok.GetUser(), nil
}

func mungeDialOption(socket string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(mungeCreds{socket: socket})
}
