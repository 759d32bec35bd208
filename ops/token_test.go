package ops

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHashTokenSecretIsSHA256Hex(t *testing.T) {
	// FIPS 180-2 test vector for "abc".
	if got := HashTokenSecret("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("HashTokenSecret(abc) = %s", got)
	}
	if !IsTokenHash(HashTokenSecret("x")) || IsTokenHash("abc") || IsTokenHash(strings.ToUpper(HashTokenSecret("x"))) {
		t.Fatal("IsTokenHash does not recognise exactly lower-case SHA-256 hex")
	}
}

func TestNewTokenSecretsAreRandomAndWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s, err := NewTokenSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, TokenSecretPrefix) {
			t.Fatalf("secret %q lacks the prefix", s)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, TokenSecretPrefix))
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret %q does not carry 32 random bytes (%v)", s, err)
		}
		if err := CheckTokenSecret(s); err != nil {
			t.Fatalf("a generated secret fails the shape check: %v", err)
		}
		if seen[s] {
			t.Fatal("the same secret was drawn twice")
		}
		seen[s] = true
		id, err := NewTokenID()
		if err != nil || len(id) != 16 {
			t.Fatalf("token id %q, %v", id, err)
		}
	}
}

func TestParseBearer(t *testing.T) {
	const secret = "lf_abcdefghijklmnopqrstuvwxyz"
	for _, header := range []string{"Bearer " + secret, "bearer " + secret, "BEARER  " + secret + " "} {
		got, err := ParseBearer(header)
		if err != nil || got != secret {
			t.Errorf("ParseBearer(%q) = %q, %v", header, got, err)
		}
	}
	for _, header := range []string{"", "Bearer", "Bearer ", secret, "Basic " + secret, "Bearer short", "Bearer " + secret + " trailing", "Bearer " + secret + "\x00"} {
		_, err := ParseBearer(header)
		if err == nil {
			t.Errorf("ParseBearer(%q) accepted it", header)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseBearer(%q) quotes the secret in its error: %v", header, err)
		}
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("\n  lf_file-secret-0123456789 \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTokenFile(path); err != nil || got != "lf_file-secret-0123456789" {
		t.Fatalf("ReadTokenFile = %q, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(path); err == nil || strings.Contains(err.Error(), "short\"") {
		t.Fatalf("a short token file: %v", err)
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing token file was read")
	}
}
