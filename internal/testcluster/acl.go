package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// BootstrapSecret is the bootstrap secret of the ACL test clusters. Tests
// also check that no log line ever holds it.
const BootstrapSecret = "lf_test-bootstrap-secret-0123456789"

// LogCapture keeps every log line of a cluster, at debug level, so a
// test can check what was (never) logged.
type LogCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ACLCluster is a test cluster that enforces tokens, bootstrapped from a
// token file holding BootstrapSecret.
type ACLCluster struct {
	*Cluster
	Logs *LogCapture // what the servers logged
}

// NewACL starts n servers with the ACL enabled and waits until the
// bootstrap token is applied everywhere. tune, if not nil, changes each
// server's configuration first.
func NewACL(tb testing.TB, n int, tune func(*server.Config)) *ACLCluster {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "bootstrap-token")
	if err := os.WriteFile(file, []byte(BootstrapSecret+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	logs := &LogCapture{}
	c := Empty(tb)
	c.logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := tb.TempDir()
	for i := range n {
		cfg := Config(dir, fmt.Sprintf("s%d", i+1))
		cfg.ACL = server.ACLConfig{Enabled: true, BootstrapTokenFile: file}
		if n == 1 {
			cfg.Bootstrap = true
		} else {
			cfg.BootstrapExpect = n
		}
		if i > 0 {
			cfg.Join = []string{c.servers[0].GossipAddr()}
		}
		if tune != nil {
			tune(&cfg)
		}
		c.Add(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.WaitLeader(ctx)
	for _, s := range c.Running() {
		for {
			if ok, _ := s.FSM().ACLBootstrapped(); ok {
				break
			}
			select {
			case <-ctx.Done():
				tb.Fatalf("%s never applied the bootstrap token", s.NodeID())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return &ACLCluster{Cluster: c, Logs: logs}
}

// As returns ctx carrying secret as its bearer token.
func As(ctx context.Context, secret string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, longfairv1.AuthorizationMetadataKey, "Bearer "+secret)
}

// CreateToken creates a token with the admin secret and returns its secret.
func (c *ACLCluster) CreateToken(ctx context.Context, role longfairv1.TokenRole, user string, ttl time.Duration) (string, *longfairv1.Token) {
	c.tb.Helper()
	req := &longfairv1.CreateTokenRequest{Role: role, User: user, Description: "test " + user}
	if ttl > 0 {
		req.Ttl = durationpb.New(ttl)
	}
	return c.CreateTokenFrom(ctx, req)
}

// CreateTokenFrom sends req with the admin secret and returns the new
// token's secret and record.
func (c *ACLCluster) CreateTokenFrom(ctx context.Context, req *longfairv1.CreateTokenRequest) (string, *longfairv1.Token) {
	c.tb.Helper()
	var resp *longfairv1.CreatedToken
	err := RetryUnavailable(ctx, c.tb, func() error {
		var err error
		resp, err = longfairv1.NewACLClient(c.Conn(c.WaitLeader(ctx))).CreateToken(As(ctx, BootstrapSecret), req)
		return err
	})
	if err != nil {
		c.tb.Fatalf("create token %v: %v", req, err)
	}
	return resp.GetSecret(), resp.GetToken()
}

// Fingerprint is everything a refused call must leave as it was, read
// from server s's replica: accounts, users, grants, jobs, the SU journal
// and the tokens.
func Fingerprint(tb testing.TB, s *server.Server) string {
	tb.Helper()
	f := s.FSM()
	var b strings.Builder
	accounts, _ := f.Accounts("", 0)
	users, _ := f.Users("", "", 0)
	grants, _, err := f.Grants("", "", 0)
	if err != nil {
		tb.Fatal(err)
	}
	jobs, _, err := f.Jobs(fsm.JobFilter{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	journal, _, err := f.Journal("", 0, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	tokens, _ := f.Tokens("", 0)
	for _, a := range accounts {
		fmt.Fprintf(&b, "account %s %v %v\n", a.Name, a.Weight, a.CreatedAt)
	}
	fmt.Fprintf(&b, "users %+v\ngrants %+v\njobs %+v\njournal %d %+v\ntokens %+v\n", users, grants, jobs, len(journal), journal, tokens)
	return b.String()
}

// WaitApplied waits until every running server has applied what the
// leader has.
func (c *ACLCluster) WaitApplied(ctx context.Context) {
	c.tb.Helper()
	leader := c.WaitLeader(ctx)
	want := leader.AppliedIndex()
	for _, s := range c.Running() {
		for s.AppliedIndex() < want {
			select {
			case <-ctx.Done():
				c.tb.Fatalf("%s did not apply index %d", s.NodeID(), want)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
