package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// probe GETs path on a server's HTTP listener and returns the status code
// and body; a refused connection is code 0.
func probe(t testing.TB, addr, path string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return 0, err.Error()
		}
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitProbe polls path until it answers code.
func waitProbe(ctx context.Context, t testing.TB, addr, path string, code int) string {
	t.Helper()
	var body string
	testcluster.WaitFor(ctx, t, path+" answering "+http.StatusText(code), func() bool {
		var got int
		got, body = probe(t, addr, path)
		return got == code
	})
	return body
}

// TestReadyzFollowsQuorum checks the probes a supervisor relies on: every
// server of a healthy group is live and ready; a server left without a
// quorum stays live but is not ready, and says why; it is ready again once
// a majority is back.
func TestReadyzFollowsQuorum(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 3, withHTTP)
	c.WaitLeader(ctx)
	for _, s := range c.Running() {
		if code, body := probe(t, s.HTTPAddr(), "/healthz"); code != http.StatusOK {
			t.Errorf("%s /healthz = %d %q", s.NodeID(), code, body)
		}
		waitProbe(ctx, t, s.HTTPAddr(), "/readyz", http.StatusOK)
	}

	// Stop two of three: the one left cannot have a leader.
	left := c.Running()[0]
	leftIdx := c.Index(left)
	var stopped []int
	for i := range c.Len() {
		if i != leftIdx {
			c.Stop(i)
			stopped = append(stopped, i)
		}
	}
	body := waitProbe(ctx, t, left.HTTPAddr(), "/readyz", http.StatusServiceUnavailable)
	if !strings.Contains(body, "no raft leader") || !strings.Contains(body, "majority") {
		t.Errorf("/readyz without quorum says %q; want it to name the missing leader and what to check", body)
	}
	if code, _ := probe(t, left.HTTPAddr(), "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz without quorum = %d; the process still runs, it must stay 200", code)
	}
	fams := scrapeMetrics(t, left)
	if v := mustSample(t, fams, "longfair_ready"); v != 0 {
		t.Errorf("longfair_ready without quorum = %v", v)
	}
	if v := mustSample(t, fams, "longfair_raft_state", "state", "leader"); v != 0 {
		t.Errorf("a server alone in a group of three reports itself leader")
	}

	// One back: two of three is a majority again.
	back := c.Start(stopped[0])
	waitProbe(ctx, t, left.HTTPAddr(), "/readyz", http.StatusOK)
	waitProbe(ctx, t, back.HTTPAddr(), "/readyz", http.StatusOK)
}

func TestHTTPListenerLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Disabled unless configured: an embedded server binds no HTTP port.
	plain := testcluster.New(t, 1)
	if addr := plain.Running()[0].HTTPAddr(); addr != "" {
		t.Errorf("a server without http_addr listens on %s", addr)
	}

	c := testcluster.NewWith(t, 1, withHTTP)
	s := c.WaitLeader(ctx)
	addr := s.HTTPAddr()
	waitProbe(ctx, t, addr, "/readyz", http.StatusOK)

	// A second server asking for the same port is refused at start, with
	// the flag to change.
	busy := testcluster.Config(t.TempDir(), "busy")
	busy.Bootstrap = true
	busy.HTTPAddr = addr
	other, err := server.New(busy, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = other.Start(ctx)
	other.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--http-addr") {
		t.Errorf("starting on a busy HTTP port: %v; want an error naming --http-addr", err)
	}

	// Shutdown closes the listener.
	c.Stop(0)
	if code, _ := probe(t, addr, "/healthz"); code != 0 {
		t.Errorf("/healthz after shutdown answered %d", code)
	}
}
