package membership

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// ParseKey decodes a gossip encryption key given in base64 (standard
// or URL alphabet, padded or not). memberlist encrypts with AES, so the
// key must be 16, 24 or 32 bytes; every server and worker of one pool
// uses the same key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	var (
		key []byte
		err error
	)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gossip key is not base64: make one with 'head -c 32 /dev/urandom | base64'")
	}
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	return key, nil
}

// CheckKey checks a decoded gossip key's length; an empty key means
// gossip is not encrypted.
func CheckKey(key []byte) error {
	switch len(key) {
	case 0, 16, 24, 32:
		return nil
	}
	return fmt.Errorf("gossip key is %d bytes: give 16, 24 or 32 bytes (base64), the same on every server and worker", len(key))
}
