package daemon

import (
	"flag"
	"os"
	"strings"

	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/worker"
)

// workerSecurityHelp is the security part of 'longfair worker --help'.
const workerSecurityHelp = `Token and TLS: servers that check tokens accept a worker holding a token
of the worker role, read from --token-file or LONGFAIR_TOKEN. Give each
node its own token bound to its --node-id (longfair acl token create
--role worker --node ID): the servers refuse a bound token whose node is
not this worker's, so a token leaked from one node cannot act as another;
an unbound worker token works for any node. With --tls-cert, --tls-key and --tls-ca the
worker calls the servers over mutual TLS and serves task output to them
only over TLS, to callers whose certificate the CA signed.

`

// workerSecurityFlags are the token and TLS flags of 'longfair worker'.
type workerSecurityFlags struct {
	tls       ops.TLSConfig
	tokenFile string
}

func (f *workerSecurityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tokenFile, "token-file", "", "`file` holding the worker's token (default: $"+client.EnvToken+")")
	fs.StringVar(&f.tls.CertFile, "tls-cert", "", "this worker's TLS certificate `file` (PEM); turns TLS on")
	fs.StringVar(&f.tls.KeyFile, "tls-key", "", "the `file` of the certificate's private key (PEM)")
	fs.StringVar(&f.tls.CAFile, "tls-ca", "", "CA certificate `file` (PEM) that signed the servers' certificates")
	fs.StringVar(&f.tls.ServerName, "tls-server-name", "", "`name` the servers' certificates carry, verified instead of the dialled host")
}

// apply puts the token and TLS files into cfg. The token is read from
// the file, or from LONGFAIR_TOKEN; it is never taken on the command
// line, where other users of the machine could read it.
func (f *workerSecurityFlags) apply(cfg *worker.Config) error {
	cfg.TLS = f.tls
	if f.tokenFile != "" {
		secret, err := ops.ReadTokenFile(f.tokenFile)
		if err != nil {
			return err
		}
		cfg.Token = secret
		return nil
	}
	cfg.Token = strings.TrimSpace(os.Getenv(client.EnvToken))
	return nil
}
