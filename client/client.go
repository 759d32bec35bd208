package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Environment variables the CLI and NewFromEnv read.
const (
	// EnvAddr holds the servers' gRPC addresses, comma-separated.
	EnvAddr = "LONGFAIR_ADDR"
	// EnvToken holds the bearer token.
	EnvToken = "LONGFAIR_TOKEN"
	// EnvAttemptTimeout holds the per-attempt deadline (a Go duration such
	// as "2s"; "0" turns it off), as WithAttemptTimeout sets it.
	EnvAttemptTimeout = "LONGFAIR_ATTEMPT_TIMEOUT"
)

// DefaultAddr is where a server listens for gRPC when started without
// flags.
const DefaultAddr = "127.0.0.1:7410"

// defaultPort is added to an address given without one.
const defaultPort = "7410"

// Client is a connection to a longfair server group. It is safe for
// concurrent use. Create it with New or NewFromEnv and Close it when done.
type Client struct {
	opts   options
	logger *slog.Logger

	mu        sync.Mutex
	endpoints []*endpoint
	// preferred is the index of the endpoint calls go to first; it moves
	// on when that endpoint answers Unavailable.
	preferred int
	closed    bool

	// stop ends the probes of stalled endpoints when the client closes.
	stop   context.Context
	cancel context.CancelFunc
	probes sync.WaitGroup
}

// endpoint is one server address and its connection.
type endpoint struct {
	addr string
	conn *grpc.ClientConn
	// stalled is set (under Client.mu) when an attempt on this server
	// got no answer within its deadline: calls go to other servers until
	// a probe (retry.go) finds it answering again.
	stalled bool
	probing bool
}

// New returns a client of the servers at addrs (host:port; a missing port
// means 7410). No connection is made until the first call, so New fails
// only on malformed addresses or options.
func New(addrs []string, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.retryFor < 0 || o.unreachableFor < 0 || o.attemptTimeout < 0 {
		return nil, errors.New("client: retry and attempt durations must not be negative")
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("client: no server address: give at least one host:port (or set %s)", EnvAddr)
	}
	c := &Client{opts: o, logger: o.logger}
	c.stop, c.cancel = context.WithCancel(context.Background())
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	for _, a := range addrs {
		if err := c.add(a); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// NewFromEnv returns a client of the servers in LONGFAIR_ADDR (default
// 127.0.0.1:7410) with the token in LONGFAIR_TOKEN and the per-attempt
// deadline in LONGFAIR_ATTEMPT_TIMEOUT. Options given here override them.
func NewFromEnv(opts ...Option) (*Client, error) {
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		addr = DefaultAddr
	}
	addrs, err := ParseAddresses(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvAddr, err)
	}
	attempt, err := AttemptTimeoutFromEnv()
	if err != nil {
		return nil, err
	}
	return New(addrs, append([]Option{WithToken(os.Getenv(EnvToken)), WithAttemptTimeout(attempt)}, opts...)...)
}

// AttemptTimeoutFromEnv is the per-attempt deadline LONGFAIR_ATTEMPT_TIMEOUT
// sets, or DefaultAttemptTimeout when it is unset.
func AttemptTimeoutFromEnv() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(EnvAttemptTimeout))
	if v == "" {
		return DefaultAttemptTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q is not a duration: give one such as 2s, or 0 to turn per-attempt deadlines off", EnvAttemptTimeout, v)
	}
	return d, nil
}

// ParseAddresses splits a comma-separated list of host:port addresses, as
// LONGFAIR_ADDR holds them. A missing port means 7410.
func ParseAddresses(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, err := normalizeAddr(part)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no address in %q: give host:port of one or more servers, comma-separated", s)
	}
	return out, nil
}

func normalizeAddr(a string) (string, error) {
	if host, port, err := net.SplitHostPort(a); err == nil {
		if p, perr := strconv.Atoi(port); perr != nil || p < 1 || p > 65535 || host == "" || strings.ContainsAny(host, " /") {
			return "", fmt.Errorf("server address %q is not host:port (for example 127.0.0.1:7410)", a)
		}
		return a, nil
	}
	// A bare host (or bare IPv6 address) gets the default port.
	host := strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if host == "" || strings.ContainsAny(host, " /") {
		return "", fmt.Errorf("server address %q is not host:port (for example 127.0.0.1:7410)", a)
	}
	return net.JoinHostPort(host, defaultPort), nil
}

// add connects to one more server address; a known one is ignored.
func (c *Client) add(addr string) error {
	a, err := normalizeAddr(addr)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("client: closed")
	}
	for _, ep := range c.endpoints {
		if ep.addr == a {
			return nil
		}
	}
	creds := c.opts.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	dial := append(longfairv1.DialOptions(), grpc.WithTransportCredentials(creds),
		// Servers allow pings this often (server.go's enforcement policy).
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}))
	if c.opts.token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearer{token: c.opts.token, secure: c.opts.creds != nil}))
	}
	dial = append(dial, c.opts.dialOpts...)
	conn, err := grpc.NewClient(a, dial...)
	if err != nil {
		return fmt.Errorf("client: connect to %s: %w", a, err)
	}
	c.endpoints = append(c.endpoints, &endpoint{addr: a, conn: conn})
	return nil
}

// Addresses lists the server addresses the client calls, in order.
func (c *Client) Addresses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		out[i] = ep.addr
	}
	return out
}

// Discover asks the group for its servers and adds the gRPC address of
// every one the client does not know yet, so that calls can fail over to
// servers that were not given to New.
func (c *Client) Discover(ctx context.Context) error {
	resp, err := c.Operator().ListPeers(ctx, &longfairv1.ListPeersRequest{})
	if err != nil {
		return err
	}
	for _, p := range resp.GetPeers() {
		if a := p.GetGrpcAddress(); a != "" {
			if err := c.add(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes every connection. Calls in flight fail.
func (c *Client) Close() error {
	c.cancel()
	c.mu.Lock()
	c.closed = true
	var errs []error
	for _, ep := range c.endpoints {
		if err := ep.conn.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close connection to %s: %w", ep.addr, err))
		}
	}
	c.mu.Unlock()
	c.probes.Wait()
	return errors.Join(errs...)
}

// Conn returns the client's retrying connection for generated service
// stubs not wrapped below: longfairv1.NewXxxClient(c.Conn()).
func (c *Client) Conn() grpc.ClientConnInterface { return (*retryConn)(c) }

// The services of the API. Every call made through them goes through the
// client's retries and idempotency rules.

// Accounts is the Accounts service.
func (c *Client) Accounts() longfairv1.AccountsClient { return longfairv1.NewAccountsClient(c.Conn()) }

// Users is the Users service.
func (c *Client) Users() longfairv1.UsersClient { return longfairv1.NewUsersClient(c.Conn()) }

// Grants is the Grants service.
func (c *Client) Grants() longfairv1.GrantsClient { return longfairv1.NewGrantsClient(c.Conn()) }

// Jobs is the Jobs service.
func (c *Client) Jobs() longfairv1.JobsClient { return longfairv1.NewJobsClient(c.Conn()) }

// Fairness is the Fairness service.
func (c *Client) Fairness() longfairv1.FairnessClient { return longfairv1.NewFairnessClient(c.Conn()) }

// Ledger is the Ledger service.
func (c *Client) Ledger() longfairv1.LedgerClient { return longfairv1.NewLedgerClient(c.Conn()) }

// ACL is the ACL service: API tokens.
func (c *Client) ACL() longfairv1.ACLClient { return longfairv1.NewACLClient(c.Conn()) }

// Operator is the Operator service.
func (c *Client) Operator() longfairv1.OperatorClient { return longfairv1.NewOperatorClient(c.Conn()) }
