package fsm

import (
	"errors"
	"fmt"
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
