package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
)

// grpcurlPath finds bin/grpcurl at the repository root, which 'make
// tools' (and so 'make test') installs at a pinned version.
func grpcurlPath(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	bin := filepath.Join(dir, "bin", "grpcurl")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("grpcurl is not installed at %s: run 'make tools' (make test does it first)", bin)
	}
	return bin
}

// grpcurl runs the real grpcurl client against addr and returns its
// stdout; failure returns stderr in the error.
func grpcurl(ctx context.Context, t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-plaintext", "-connect-timeout", "5"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &grpcurlError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type grpcurlError struct {
	err    error
	stderr string
}

func (e *grpcurlError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

// TestGrpcurlListsAndCallsThroughReflection points grpcurl, a client that
// knows nothing of longfair's protos, at a real one-server group: through
// server reflection alone it lists every service the server registered,
// describes them, and calls them with JSON in and JSON out.
func TestGrpcurlListsAndCallsThroughReflection(t *testing.T) {
	bin := grpcurlPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	s := c.WaitLeader(ctx)
	addr := s.GRPCAddr()

	out, err := grpcurl(ctx, t, bin, addr, "list")
	if err != nil {
		t.Fatalf("grpcurl list: %v", err)
	}
	listed := strings.Fields(out)
	var registered []string
	for name := range s.GRPCServer().GetServiceInfo() {
		registered = append(registered, name)
		if !slices.Contains(listed, name) {
			t.Errorf("grpcurl list does not show the registered service %s; it shows %v", name, listed)
		}
	}
	for _, want := range []string{"longfair.v1.Accounts", "longfair.v1.Jobs", "longfair.v1.Fairness", "longfair.v1.Ledger", "longfair.v1.Operator"} {
		if !slices.Contains(registered, want) {
			t.Errorf("the server does not register %s", want)
		}
	}

	out, err = grpcurl(ctx, t, bin, addr, "describe", "longfair.v1.Operator")
	if err != nil {
		t.Fatalf("grpcurl describe: %v", err)
	}
	if !strings.Contains(out, "rpc ListPeers") || !strings.Contains(out, "rpc SaveSnapshot") {
		t.Errorf("describe longfair.v1.Operator lacks its methods:\n%s", out)
	}

	// A write and reads, JSON in and out.
	out, err = grpcurl(ctx, t, bin, "-d", `{"name": "astro"}`, addr, "longfair.v1.Accounts/CreateAccount")
	if err != nil {
		t.Fatalf("grpcurl CreateAccount: %v", err)
	}
	var account struct{ Name string }
	if err := json.Unmarshal([]byte(out), &account); err != nil || account.Name != "astro" {
		t.Errorf("CreateAccount answered %q (%v); want the account astro as JSON", out, err)
	}
	if got, err := s.FSM().Account("astro"); err != nil || got.Name != "astro" {
		t.Errorf("after grpcurl created astro the ledger has %+v, %v", got, err)
	}

	out, err = grpcurl(ctx, t, bin, "-d", `{}`, addr, "longfair.v1.Operator/ListPeers")
	if err != nil {
		t.Fatalf("grpcurl ListPeers: %v", err)
	}
	var peers struct {
		Peers []struct {
			ID     string `json:"id"`
			Leader bool   `json:"leader"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &peers); err != nil {
		t.Fatalf("ListPeers answered %q: %v", out, err)
	}
	if len(peers.Peers) != 1 || peers.Peers[0].ID != s.NodeID() || !peers.Peers[0].Leader {
		t.Errorf("ListPeers = %+v; want %s alone, leading", peers.Peers, s.NodeID())
	}

	out, err = grpcurl(ctx, t, bin, "-d", `{}`, addr, "longfair.v1.Fairness/GetFairnessReport")
	if err != nil {
		t.Fatalf("grpcurl GetFairnessReport: %v", err)
	}
	var report struct {
		Policy   string `json:"policy"`
		Accounts []struct {
			Account string `json:"account"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("GetFairnessReport answered %q: %v", out, err)
	}
	if report.Policy != string(s.FSM().Settings().Policy) || len(report.Accounts) != 1 || report.Accounts[0].Account != "astro" {
		t.Errorf("fairness report through grpcurl = %+v", report)
	}

	// Bad input is refused with its code and changes nothing.
	before, _ := s.FSM().Accounts("", 0)
	_, err = grpcurl(ctx, t, bin, "-d", `{"name": ""}`, addr, "longfair.v1.Accounts/CreateAccount")
	if err == nil || !strings.Contains(err.Error(), "InvalidArgument") {
		t.Errorf("CreateAccount with no name through grpcurl: %v; want InvalidArgument", err)
	}
	if after, _ := s.FSM().Accounts("", 0); len(after) != len(before) {
		t.Errorf("a refused CreateAccount changed the accounts from %d to %d", len(before), len(after))
	}
}

// TestGrpcurlCarriesABearerToken runs grpcurl against a server that checks
// tokens, as production servers do: without a token it can neither list
// nor call; with the admin token in the authorization header it does both.
func TestGrpcurlCarriesABearerToken(t *testing.T) {
	bin := grpcurlPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := testcluster.NewACL(t, 1, nil)
	s := c.WaitLeader(ctx)
	addr := s.GRPCAddr()
	bearer := "authorization: Bearer " + testcluster.BootstrapSecret

	if _, err := grpcurl(ctx, t, bin, addr, "list"); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("grpcurl list without a token: %v; want Unauthenticated", err)
	}
	_, err := grpcurl(ctx, t, bin, "-d", `{"name": "astro"}`, addr, "longfair.v1.Accounts/CreateAccount")
	if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("CreateAccount without a token: %v; want Unauthenticated", err)
	}
	if _, err := s.FSM().Account("astro"); err == nil {
		t.Error("a call without a token created an account")
	}

	out, err := grpcurl(ctx, t, bin, "-H", bearer, addr, "list")
	if err != nil || !strings.Contains(out, "longfair.v1.Accounts") {
		t.Fatalf("grpcurl list with the admin token: %q, %v", out, err)
	}
	if _, err := grpcurl(ctx, t, bin, "-H", bearer, "-d", `{"name": "astro"}`, addr, "longfair.v1.Accounts/CreateAccount"); err != nil {
		t.Fatalf("CreateAccount with the admin token: %v", err)
	}
	if _, err := s.FSM().Account("astro"); err != nil {
		t.Errorf("CreateAccount with the admin token did not create the account: %v", err)
	}
}
