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

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
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

// pick returns the endpoint a call goes to first and its index: the
// preferred one, or the next that has not stalled while another is left.
func (c *Client) pick() (*endpoint, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.endpoints) == 0 {
		return nil, 0, status.Error(codes.Canceled, "client is closed")
	}
	n := len(c.endpoints)
	for k := range n {
		i := (c.preferred + k) % n
		if !c.endpoints[i].stalled {
			return c.endpoints[i], i, nil
		}
	}
	i := c.preferred % n
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

// Probing a stalled server: how often, and how long one probe waits.
const (
	probeInterval = 500 * time.Millisecond
	probeTimeout  = time.Second
)

// markStalled sets ep aside after an attempt on it got no answer in time,
// and starts probing it with a cheap call (GetLeader, answered by any
// server from its own view) until it answers; then calls may go to it
// again. Without the probe a paused server would cost one attempt deadline
// to every call that reached it.
func (c *Client) markStalled(ep *endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ep.stalled = true
	if ep.probing || c.closed {
		return
	}
	ep.probing = true
	c.probes.Add(1)
	go func() {
		defer c.probes.Done()
		c.probe(ep)
	}()
}

func (c *Client) probe(ep *endpoint) {
	defer func() {
		c.mu.Lock()
		ep.probing = false
		c.mu.Unlock()
	}()
	ops := longfairv1.NewOperatorClient(ep.conn)
	for {
		select {
		case <-c.stop.Done():
			return
		case <-time.After(probeInterval):
		}
		ctx, cancel := context.WithTimeout(c.stop, probeTimeout)
		_, err := ops.GetLeader(ctx, &longfairv1.GetLeaderRequest{})
		cancel()
		if answered(err) {
			c.markAnswered(ep)
			c.logger.Debug("server answers again", "server", ep.addr)
			return
		}
	}
}

// markAnswered clears a stall once the server answered.
func (c *Client) markAnswered(ep *endpoint) {
	c.mu.Lock()
	ep.stalled = false
	c.mu.Unlock()
}

// answered reports whether err (or success) came from a server that is
// running: anything but silence or a broken connection.
func answered(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled:
		return false
	}
	return true
}

// attemptContext bounds one attempt of a call (see WithAttemptTimeout):
// the first gets the configured deadline, or a third of what is left of
// the caller's deadline if that is less (never under MinAttemptTimeout).
// It doubles each time the call has stalled as often as there are
// servers: when every server seems stalled, they are more likely slow
// than stopped. (Doubling at every stall would give a stopped server met
// second twice the time.) limit is 0 when the attempt is bounded by ctx
// alone.
func (c *Client) attemptContext(ctx context.Context, bounded bool, stalls int) (actx context.Context, cancel context.CancelFunc, limit time.Duration) {
	d := c.opts.attemptTimeout
	if !bounded || d <= 0 {
		return ctx, func() {}, 0
	}
	left := time.Duration(1<<63 - 1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
		d = min(d, max(left/3, MinAttemptTimeout))
	}
	for range stalls / c.endpointCount() {
		if d >= left {
			break
		}
		d *= 2
	}
	if d >= left {
		return ctx, func() {}, 0
	}
	actx, cancel = context.WithTimeout(ctx, d)
	return actx, cancel, d
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

// connected waits, for at most one attempt deadline, until ep's
// connection is up before a stream is opened on it. Streams have no
// attempt deadline (they may run long), and one opened on a connection
// still being made waits as long as its context allows, so a server that
// accepts TCP connections but never answers (a stopped process) would
// hold it. (A server that answered before and stopped since is found by
// keepalive pings.) Failed connections are left to the stream call to
// report.
func (c *Client) connected(ctx context.Context, ep *endpoint) error {
	actx, cancel, limit := c.attemptContext(ctx, true, 0)
	defer cancel()
	if limit == 0 {
		return nil
	}
	ep.conn.Connect()
	for {
		st := ep.conn.GetState()
		switch st {
		case connectivity.Ready, connectivity.TransientFailure, connectivity.Shutdown:
			return nil
		}
		if ep.conn.WaitForStateChange(actx, st) {
			continue
		}
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		c.markStalled(ep)
		return status.Errorf(codes.Unavailable, "server %s did not complete a connection within %v, the attempt deadline (%s)", ep.addr, limit, EnvAttemptTimeout)
	}
}

// do runs call against the preferred endpoint and retries it, moving on
// through the endpoints, while the answer is retryable and the budget and
// ctx allow. A bounded call's attempts have their own deadlines
// (attemptContext): an attempt that gets no answer in time stalled, and
// the call moves on to the next server at once. It returns the last
// answer.
func (c *Client) do(ctx context.Context, method string, bounded bool, call func(context.Context, *endpoint) error) error {
	start := time.Now()
	backoff := firstBackoff
	var downSince time.Time // when every attempt started failing to connect
	stalls := 0
	for attempt := 1; ; attempt++ {
		ep, idx, err := c.pick()
		if err != nil {
			return err
		}
		actx, cancel, limit := c.attemptContext(ctx, bounded, stalls)
		err = call(actx, ep)
		// The server may report the attempt's deadline (which it
		// received with the call) a moment before this process sees it.
		stalled := limit > 0 && status.Code(err) == codes.DeadlineExceeded && ctx.Err() == nil
		cancel()
		if stalled {
			stalls++
			c.markStalled(ep)
			err = status.Errorf(codes.Unavailable, "server %s did not answer within %v, the attempt deadline (%s)", ep.addr, limit, EnvAttemptTimeout)
		} else if answered(err) {
			c.markAnswered(ep)
		}
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
		if stalled {
			// The attempt already waited; the next server is tried at
			// once.
			continue
		}
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

// ErrOutcomeUnknown is matched (errors.Is) by the error of a write that
// must not be repeated (longfairv1.NeverRepeat: a token) after an attempt
// that reached a server but got no answer: the write may or may not have
// been applied. Its gRPC code is Unknown.
var ErrOutcomeUnknown = errors.New("the outcome of the write is unknown")

type outcomeUnknownError struct{ st *status.Status }

func (e outcomeUnknownError) Error() string              { return e.st.Err().Error() }
func (e outcomeUnknownError) GRPCStatus() *status.Status { return e.st }
func (e outcomeUnknownError) Is(target error) bool       { return target == ErrOutcomeUnknown }

// outcomeUnknown says that a write was not retried, why, and how to check
// what happened.
func outcomeUnknown(method, addr string, limit time.Duration) error {
	check := "list what exists before trying again"
	if strings.HasPrefix(method, "/longfair.v1.ACL/") {
		check = "check with 'longfair acl token list' before creating another token, and revoke any token whose secret you did not get"
	}
	return outcomeUnknownError{status.Newf(codes.Unknown, "%s: outcome unknown: server %s got the request but did not answer within %v; it is not sent again because a repeat would create a second one: %s",
		strings.TrimPrefix(method, "/longfair.v1."), addr, limit, check)}
}
