package membership

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestParseGossipKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		got, err := ParseKey(" " + enc.EncodeToString(key) + "\n")
		if err != nil || string(got) != string(key) {
			t.Fatalf("ParseKey of %q: %q, %v", enc.EncodeToString(key), got, err)
		}
	}
	for _, n := range []int{16, 24} {
		if _, err := ParseKey(base64.StdEncoding.EncodeToString(key[:n])); err != nil {
			t.Fatalf("a %d-byte key: %v", n, err)
		}
	}
	if _, err := ParseKey(base64.StdEncoding.EncodeToString(key[:15])); err == nil || !strings.Contains(err.Error(), "15 bytes") {
		t.Fatalf("a 15-byte key: %v", err)
	}
	if _, err := ParseKey("not base64!"); err == nil || !strings.Contains(err.Error(), "urandom") {
		t.Fatalf("a key that is not base64: %v", err)
	}
}
