package daemon

import (
	"flag"
	"fmt"
	"os"

	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/membership"
	"github.com/longfair/longfair/server"
)

// serverSecurityHelp is the security part of 'longfair server --help'.
const serverSecurityHelp = `Security:

  Tokens: every call but health checks carries a bearer token (the acl
  setting is on by default; --acl=false turns the checks off, for a trial
  on a closed machine only). The first admin token comes from
  'longfair acl bootstrap' (works once), or from --acl-bootstrap-token FILE
  given to every server; then 'longfair acl token create' makes more.

  TLS: --tls-cert and --tls-key make the server serve TLS on gRPC and Raft
  and dial its peers and workers with TLS; with --tls-ca it also requires
  every caller, peer and worker to show a certificate that CA signed
  (mutual TLS). Every server of a group uses TLS, or none.

  Gossip: --gossip-key (or LONGFAIR_GOSSIP_KEY) encrypts the gossip pool;
  every server and worker uses the same key: head -c 32 /dev/urandom | base64

    longfair server ... --tls-cert s1.pem --tls-key s1-key.pem --tls-ca ca.pem \
        --gossip-key "$(cat gossip.key)" --acl-bootstrap-token /etc/longfair/bootstrap.token

`

// securityFlags are the TLS, gossip and ACL flags of 'longfair server'.
type securityFlags struct {
	tls            ops.TLSConfig
	gossipKey      string
	acl            bool
	bootstrapToken string
	mungeSocket    string
}

func (f *securityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tls.CertFile, "tls-cert", "", "this server's TLS certificate `file` (PEM); turns TLS on")
	fs.StringVar(&f.tls.KeyFile, "tls-key", "", "the `file` of the certificate's private key (PEM)")
	fs.StringVar(&f.tls.CAFile, "tls-ca", "", "CA certificate `file` (PEM): callers, peers and workers must show a certificate it signed")
	fs.StringVar(&f.tls.ServerName, "tls-server-name", "", "`name` every server and worker certificate carries, verified instead of the dialled host")
	fs.StringVar(&f.gossipKey, "gossip-key", "", "base64 `key` encrypting gossip (default: $LONGFAIR_GOSSIP_KEY)")
	fs.BoolVar(&f.acl, "acl", true, "check bearer tokens on every call (--acl=false: no checks)")
	fs.StringVar(&f.bootstrapToken, "acl-bootstrap-token", "", "`file` holding the secret of the first admin token, created once by the first leader")
	fs.StringVar(&f.mungeSocket, "munge-socket", "", "`socket` of this node's munged: accept MUNGE credentials of Unix users as their longfair users (acl.munge_socket)")
}

// apply sets what was given on the command line over cfg. The gossip key
// comes from LONGFAIR_GOSSIP_KEY when neither the flag nor the config
// file gives one.
func (f *securityFlags) apply(fs *flag.FlagSet, cfg *server.Config) error {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["tls-cert"] {
		cfg.TLS.CertFile = f.tls.CertFile
	}
	if given["tls-key"] {
		cfg.TLS.KeyFile = f.tls.KeyFile
	}
	if given["tls-ca"] {
		cfg.TLS.CAFile = f.tls.CAFile
	}
	if given["tls-server-name"] {
		cfg.TLS.ServerName = f.tls.ServerName
	}
	if given["acl"] {
		cfg.ACL.Enabled = f.acl
	}
	if given["acl-bootstrap-token"] {
		cfg.ACL.BootstrapTokenFile = f.bootstrapToken
	}
	if given["munge-socket"] {
		cfg.ACL.MungeSocket = f.mungeSocket
	}
	key := f.gossipKey
	if !given["gossip-key"] && len(cfg.GossipKey) == 0 {
		key = os.Getenv("LONGFAIR_GOSSIP_KEY")
	}
	if key != "" {
		k, err := membership.ParseKey(key)
		if err != nil {
			return fmt.Errorf("--gossip-key: %w", err)
		}
		cfg.GossipKey = k
	}
	return nil
}
