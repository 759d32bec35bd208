package server

import (
	"errors"
	"fmt"

	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/membership"
)

// ACLConfig says whether calls must carry a token, and how the cluster
// gets its first admin token.
type ACLConfig struct {
	// Enabled makes every call but health checks and ACL.Bootstrap carry
	// a token (metadata "authorization: Bearer <secret>"): a call without
	// one is refused with Unauthenticated, a call its token does not allow
	// with PermissionDenied. 'longfair server' turns it on unless told
	// otherwise (--acl=false, or "acl": {"enabled": false} in its config
	// file); DefaultConfig leaves it off for a server embedded in another
	// program or a test, as it leaves the HTTP listener off. Every server
	// of a group must agree on it.
	Enabled bool `json:"enabled"`
	// BootstrapTokenFile names a file holding the secret of the first admin
	// token (16 to 256 printable characters). The first leader that finds
	// the cluster without a bootstrap token creates it, storing only the
	// secret's hash; once the cluster has one the file is ignored. Give
	// every server the same file, or bootstrap once with 'longfair acl
	// bootstrap' instead.
	BootstrapTokenFile string `json:"bootstrap_token_file,omitempty"`
	// MungeSocket is the socket of this node's munged: calls may then
	// carry a MUNGE credential of a Unix user instead of a token, and act
	// as the longfair user of that Unix account (auth_munge.go). Every
	// server needs it, with munged sharing the cluster's MUNGE key.
	MungeSocket string `json:"munge_socket,omitempty"`
}

// validateSecurity checks the TLS files, the gossip key and the ACL
// bootstrap file.
func (c Config) validateSecurity() error {
	var errs []error
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	} else if c.TLS.Enabled() && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("tls: a server needs its own certificate and key to serve TLS: give --tls-cert and --tls-key (tls.cert_file, tls.key_file) with --tls-ca"))
	}
	if err := membership.CheckKey(c.GossipKey); err != nil {
		errs = append(errs, fmt.Errorf("%w (gossip_key, --gossip-key)", err))
	}
	if c.ACL.BootstrapTokenFile != "" {
		if _, err := ops.ReadTokenFile(c.ACL.BootstrapTokenFile); err != nil {
			errs = append(errs, fmt.Errorf("acl bootstrap token: %w", err))
		}
	}
	return errors.Join(errs...)
}
