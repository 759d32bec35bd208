package fsm

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKindOf(t *testing.T) {
	refusal := refuse(KindExists, "account %q already exists", "phys")
	cases := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, KindNone},
		{"refusal", refusal, KindExists},
		{"wrapped refusal", fmt.Errorf("propose: %w", refusal), KindExists},
		{"store failure", errors.New("disk full"), KindInternal},
	}
	for _, c := range cases {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("%s: KindOf(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// Every kind has a name, so refusals print readably in logs and tests.
func TestKindsNamed(t *testing.T) {
	seen := map[string]Kind{}
	for _, k := range Kinds() {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "Kind(") {
			t.Errorf("kind %d has no name in kindNames", uint8(k))
		}
		if other, ok := seen[name]; ok {
			t.Errorf("kinds %d and %d share the name %q", uint8(other), uint8(k), name)
		}
		seen[name] = k
	}
	if got := Kinds()[0]; got != KindNone {
		t.Errorf("Kinds()[0] = %v, want KindNone", got)
	}
}

// The FSM speaks the ledger's language: refusals carry a Kind, and only
// package server maps kinds to gRPC codes. No file of the package (tests
// aside) may import gRPC again.
func TestNoTransportImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(path, "google.golang.org/grpc") {
				t.Errorf("%s imports %s: return a refusal of a Kind (errors.go) and let package server map it to a gRPC code", name, path)
			}
		}
	}
}
