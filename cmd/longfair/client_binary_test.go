package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/longfair/longfair/internal/cli"
)

// The client binary (cmd/longfair-client) has cli.Commands alone. Every
// command this binary adds to them must be one the client names as being
// in the full binary, so that a user who runs it from a login node is told
// where it is rather than that it does not exist.
func TestClientBinarySaysWhereTheDaemonsAre(t *testing.T) {
	client := cli.Commands()
	added := 0
	for name := range commands() {
		if _, ok := client[name]; ok {
			if cli.FullBinaryOnly(name) {
				t.Errorf("%q is in the client's commands but FullBinaryOnly says it is not", name)
			}
			continue
		}
		added++
		if !cli.FullBinaryOnly(name) {
			t.Errorf("the full binary adds %q, which FullBinaryOnly does not name: the client binary would call it unknown", name)
			continue
		}
		var stdout, stderr bytes.Buffer
		if code := cli.Dispatch(client, []string{name, "--help"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "full longfair binary") {
			t.Errorf("client binary, %s --help: exit %d, %q; want 2 and where to run it", name, code, stderr.String())
		}
	}
	if added == 0 {
		t.Fatal("the full binary adds no command to the client's: the test checks nothing")
	}
}
