package membership

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

func TestStartGossipRefusesBadAddresses(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []Config{
		{Name: "a", Addr: "no-port"},
		{Name: "a", Addr: "127.0.0.1:http"},
		{Name: "a", Addr: "127.0.0.1:0", Advertise: "10.0.0.1"},
	} {
		if ml, _, err := Start(c, quiet); err == nil {
			ml.Shutdown()
			t.Errorf("%+v: accepted", c)
		} else if !strings.Contains(err.Error(), "gossip") {
			t.Errorf("%+v: error %q does not say which address is wrong", c, err)
		}
	}
}

func TestTwoMembersJoinOverLoopback(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, addrA, err := Start(Config{Name: "a", Addr: "127.0.0.1:0"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	b, _, err := Start(Config{Name: "b", Addr: "127.0.0.1:0", ReclaimDeadNames: time.Second}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	if !strings.HasPrefix(addrA, "127.0.0.1:") || strings.HasSuffix(addrA, ":0") {
		t.Fatalf("member a is joinable at %q, want the port it bound", addrA)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	Join(ctx, b, []string{addrA}, quiet)
	for a.NumMembers() != 2 || b.NumMembers() != 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("members see %d and %d members, want 2 each", a.NumMembers(), b.NumMembers())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestJoinAddressWithoutAPortUsesTheBoundPort(t *testing.T) {
	// A pool whose members share one port can be joined by host alone:
	// here 127.0.0.2 from 127.0.0.1, both on the port the kernel picked
	// for the first member.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, addrA, err := Start(Config{Name: "a", Addr: "127.0.0.2:0"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	_, port, _ := net.SplitHostPort(addrA)
	b, _, err := Start(Config{Name: "b", Addr: net.JoinHostPort("127.0.0.1", port)}, quiet)
	if err != nil {
		t.Skipf("port %s is taken on 127.0.0.1: %v", port, err)
	}
	defer b.Shutdown()
	if n, err := b.Join([]string{"127.0.0.2"}); n != 1 {
		t.Fatalf("joining 127.0.0.2 without a port reached %d members: %v", n, err)
	}
}
