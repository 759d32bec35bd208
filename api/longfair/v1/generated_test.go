package longfairv1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the code of this package from
// the protos, http.yaml and openapi.yaml into a scratch folder, with the
// plugins `make proto` pins, and checks the committed files are the same:
// an edited .proto or HTTP rule without `make proto` fails here. Without
// protoc or the plugins in bin/protoc-plugins it is skipped.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(root, "bin", "protoc-plugins")
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc is not installed (Debian: apt-get install protobuf-compiler)")
	}
	for _, p := range []string{"protoc-gen-go", "protoc-gen-go-grpc", "protoc-gen-go-vtproto", "protoc-gen-grpc-gateway", "protoc-gen-openapiv2"} {
		if _, err := os.Stat(filepath.Join(plugins, p)); err != nil {
			t.Skipf("%s is not in bin/protoc-plugins: run `make proto` once to install the pinned plugins", p)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "api/generate.sh", out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PROTO_PLUGINS="+plugins)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("api/generate.sh: %v\n%s", err, msg)
	}
	fresh, err := os.ReadDir(filepath.Join(out, "longfair", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for _, f := range fresh {
		generated[f.Name()] = true
		want, err := os.ReadFile(filepath.Join(out, "longfair", "v1", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f.Name())
		if err != nil {
			t.Errorf("%s is generated but not committed (%v): run make proto and commit the result", f.Name(), err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s is not what `make proto` generates now: run make proto and commit the result", f.Name())
		}
	}
	committed, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range committed {
		name := f.Name()
		if (strings.HasSuffix(name, ".pb.go") || strings.HasSuffix(name, ".pb.gw.go") || strings.HasSuffix(name, ".swagger.json")) && !generated[name] {
			t.Errorf("%s is generated from nothing any more: remove it", name)
		}
	}
}
