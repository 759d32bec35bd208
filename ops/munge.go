package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// MUNGE (the credential service Slurm and Flux use) authenticates the
// calling Unix user on the cluster's own nodes: the CLI asks its node's
// munged for a credential (`munge -n`), the servers ask theirs to decode
// it (`unmunge`), and munged, not longfair, checks the shared key, the
// expiry and replays. longfair runs MUNGE's own tools rather than
// defining a credential format of its own.

// MungeScheme is the authorization scheme of a MUNGE credential:
// "authorization: MUNGE <credential>".
const MungeScheme = "MUNGE"

// MaxMungeCredentialLength bounds a credential a server accepts; an
// empty-payload credential is about 150 characters.
const MaxMungeCredentialLength = 4096

// ErrMungeRefused marks a credential munged refused (expired, replayed,
// forged, or not a credential).
var ErrMungeRefused = errors.New("MUNGE credential refused")

// MungeIdentity is who a decoded credential says made it.
type MungeIdentity struct {
	UID, GID uint32
}

// MungeCredential makes a credential of the calling process's user
// through the munged at socket ("" is MUNGE's default socket).
func MungeCredential(ctx context.Context, socket string) (string, error) {
	args := []string{"--no-input"}
	if socket != "" {
		args = append(args, "--socket="+socket)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "munge", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("munge: %v: %s (is munged running? give a token instead with --token or LONGFAIR_TOKEN)", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// DecodeMunge has the munged at socket decode cred. A credential munged
// refuses is an error wrapping ErrMungeRefused, with munged's reason.
func DecodeMunge(ctx context.Context, socket, cred string) (MungeIdentity, error) {
	if len(cred) > MaxMungeCredentialLength || !strings.HasPrefix(cred, "MUNGE:") {
		return MungeIdentity{}, fmt.Errorf("%w: not a MUNGE credential", ErrMungeRefused)
	}
	args := []string{"--keys=STATUS,UID,GID"}
	if socket != "" {
		args = append(args, "--socket="+socket)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "unmunge", args...)
	cmd.Stdin = strings.NewReader(cred)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	fields := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	var exit *exec.ExitError
	switch {
	case err != nil && errors.As(err, &exit) && (fields["STATUS"] != "" || stderr.Len() > 0):
		why := fields["STATUS"]
		if why == "" {
			why = strings.TrimPrefix(strings.TrimSpace(stderr.String()), "unmunge: Error: ")
		}
		return MungeIdentity{}, fmt.Errorf("%w: %s", ErrMungeRefused, why)
	case err != nil:
		return MungeIdentity{}, fmt.Errorf("unmunge: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	uid, err1 := parenNumber(fields["UID"])
	gid, err2 := parenNumber(fields["GID"])
	if err1 != nil || err2 != nil {
		return MungeIdentity{}, fmt.Errorf("unmunge gave UID %q and GID %q: %w", fields["UID"], fields["GID"], errors.Join(err1, err2))
	}
	return MungeIdentity{UID: uid, GID: gid}, nil
}

// parenNumber reads the number unmunge shows in parentheses ("ann (1001)").
func parenNumber(s string) (uint32, error) {
	i, j := strings.LastIndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return 0, fmt.Errorf("no number in %q", s)
	}
	n, err := strconv.ParseUint(s[i+1:j], 10, 32)
	if err != nil {
		return 0, fmt.Errorf("read %q: %w", s, err)
	}
	return uint32(n), nil
}
