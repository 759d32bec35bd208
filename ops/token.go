package ops

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// API tokens. A token has two parts: a public id (the accessor), which
// names it in listings and revocations, and a secret, which the caller
// sends as "Authorization: Bearer <secret>". The cluster stores only the
// SHA-256 of the secret: a copy of the state, a snapshot or a log line
// never holds a usable token.

// TokenSecretPrefix starts every secret the cluster generates, so that a
// leaked one is easy to recognise (and to grep for).
const TokenSecretPrefix = "lf_"

// Limits on secrets given by an operator (the bootstrap token file).
const (
	MinTokenSecretLength = 16
	MaxTokenSecretLength = 256
)

// NewTokenSecret returns a new secret: the prefix and 256 random bits.
// Unsalted SHA-256 is a sound way to store it because it is random, not a
// password a person chose.
func NewTokenSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate a token secret: %w", err)
	}
	return TokenSecretPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// NewTokenID returns a new token id: 16 hex digits.
func NewTokenID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate a token id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// HashTokenSecret is what the cluster stores and looks tokens up by: the
// SHA-256 of the secret, in lower-case hex.
func HashTokenSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// IsTokenHash reports whether h has the shape HashTokenSecret returns.
func IsTokenHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ErrNoBearer means a request carried no bearer token.
var ErrNoBearer = errors.New("no bearer token")

// ParseBearer extracts the secret from an authorization header value,
// "Bearer <secret>" (the scheme in any case). It never puts the value it
// was given into an error, since that value may be a secret.
func ParseBearer(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", ErrNoBearer
	}
	scheme, secret, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errors.New(`the authorization header is not "Bearer <token>"`)
	}
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return "", ErrNoBearer
	}
	if err := CheckTokenSecret(secret); err != nil {
		return "", err
	}
	return secret, nil
}

// CheckTokenSecret checks the shape of a secret: 16 to 256 printable
// ASCII characters without spaces. Like ParseBearer, it never quotes the
// secret in its error.
func CheckTokenSecret(secret string) error {
	if n := len(secret); n < MinTokenSecretLength || n > MaxTokenSecretLength {
		return fmt.Errorf("the token is %d characters long: a token has %d to %d", n, MinTokenSecretLength, MaxTokenSecretLength)
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("the token has a space, control or non-ASCII character at position %d: a token is printable ASCII", i)
		}
	}
	return nil
}

// ReadTokenFile reads a secret from a file (surrounding white space is
// ignored), as the bootstrap token and a worker's token are given.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if err := CheckTokenSecret(secret); err != nil {
		return "", fmt.Errorf("token file %s: %w (put one token in it, for example one made with 'head -c 32 /dev/urandom | base64')", path, err)
	}
	return secret, nil
}
