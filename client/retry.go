package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// Backoff between attempts: doubling from the first to the cap, with
// jitter so that many clients retrying after one election do not call in
// lockstep.
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = time.Second
)

// retryable reports whether an answer means "try again, maybe elsewhere":
// no leader, leadership moved, the server is stopping or cannot be
// reached (Unavailable), or a snapshot restore replaced the state under
// the call (Aborted).
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted:
		return true
	}
	return false
}

// pick returns the endpoint a call goes to first and its index.
func (c *Client) pick() (*endpoint, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.endpoints) == 0 {
		return nil, 0, status.Error(codes.Canceled, "client is closed")
	}
	i := c.preferred % len(c.endpoints)
	return c.endpoints[i], i, nil
}

// moveOn makes the endpoint after i the preferred one, unless another call
// already moved on from i.
func (c *Client) moveOn(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.preferred%len(c.endpoints) == i {
		c.preferred = (i + 1) % len(c.endpoints)
	}
}

// unreachable reports whether a failed call never reached a server: the
// connection could not be established. A server's own Unavailable answer
// (no leader yet) comes over a working connection.
func unreachable(ep *endpoint, err error) bool {
	if status.Code(err) != codes.Unavailable {
		return false
	}
	switch ep.conn.GetState() {
	case connectivity.TransientFailure, connectivity.Shutdown:
		return true
	}
	return false
}

// do runs call against the preferred endpoint and retries it, moving on
// through the endpoints, while the answer is retryable and the budget and
// ctx allow. It returns the last answer.
func (c *Client) do(ctx context.Context, method string, call func(context.Context, *endpoint) error) error {
	start := time.Now()
	backoff := firstBackoff
	var downSince time.Time // when every attempt started failing to connect
	for attempt := 1; ; attempt++ {
		ep, idx, err := c.pick()
		if err != nil {
			return err
		}
		err = call(ctx, ep)
		if err == nil || !retryable(err) {
			return err
		}
		if ctx.Err() != nil {
			return contextError(ctx, err)
		}
		c.moveOn(idx)
		now := time.Now()
		down := unreachable(ep, err)
		switch {
		case !down:
			downSince = time.Time{}
		case downSince.IsZero():
			downSince = now
		}
		if down && now.Sub(downSince) >= c.opts.unreachableFor && attempt >= c.endpointCount() {
			return c.unreachableError(err)
		}
		if now.Sub(start) >= c.opts.retryFor {
			if down {
				return c.unreachableError(err)
			}
			if c.opts.retryFor == 0 {
				return err
			}
			return status.Errorf(status.Code(err), "%s (still so after %d attempts in %v)", status.Convert(err).Message(), attempt, now.Sub(start).Round(time.Millisecond))
		}
		c.logger.Debug("retrying", "method", method, "attempt", attempt, "server", ep.addr, "error", status.Convert(err).Message())
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, maxBackoff)
		select {
		case <-ctx.Done():
			return contextError(ctx, err)
		case <-time.After(wait):
		}
	}
}

func (c *Client) endpointCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.endpoints)
}

// ErrUnreachable is matched (errors.Is) by the error of a call that could
// not connect to any server. Its gRPC code is Unavailable.
var ErrUnreachable = errors.New("no longfair server is reachable")

type unreachableError struct{ st *status.Status }

func (e unreachableError) Error() string              { return e.st.Err().Error() }
func (e unreachableError) GRPCStatus() *status.Status { return e.st }
func (e unreachableError) Is(target error) bool       { return target == ErrUnreachable }

// unreachableError says which addresses were tried and what to check.
func (c *Client) unreachableError(last error) error {
	return unreachableError{status.Newf(codes.Unavailable, "cannot reach a longfair server at %s (%s): check that the cluster is running and that the address (--addr or %s) is right",
		strings.Join(c.Addresses(), ","), status.Convert(last).Message(), EnvAddr)}
}

// contextError reports that ctx ended while the call was being retried,
// with the last answer, which says why it was retried.
func contextError(ctx context.Context, last error) error {
	code := codes.DeadlineExceeded
	if errors.Is(ctx.Err(), context.Canceled) {
		code = codes.Canceled
	}
	return status.Error(code, fmt.Sprintf("%v while retrying; the last answer was: %s", ctx.Err(), status.Convert(last).Message()))
}
