package client

import (
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Defaults of the retry budget.
const (
	// DefaultRetryFor is how long a call keeps retrying while servers
	// answer Unavailable (an election usually ends within a few seconds).
	DefaultRetryFor = 30 * time.Second
	// DefaultUnreachableFor is how long a call keeps trying when no server
	// at any address can be reached at all: long enough to ride out one
	// server restarting, short enough that a wrong address fails fast.
	DefaultUnreachableFor = 3 * time.Second
	// DefaultAttemptTimeout is how long one attempt of a unary call waits
	// for a server before the client gives up on that server and tries the
	// next: a stopped or hung server otherwise holds the call until the
	// caller's own deadline. Healthy servers answer reads and commit writes
	// in milliseconds; once a call has stalled on every server, its
	// attempts get twice as long, so a call that is merely slow still
	// completes.
	DefaultAttemptTimeout = 2 * time.Second
	// MinAttemptTimeout is the floor of an attempt's deadline when it is
	// derived from a short caller deadline (a third of what is left).
	MinAttemptTimeout = 250 * time.Millisecond
)

// Keepalive pings on every connection find a server that stopped
// answering even when no call is waiting on it (gRPC's minimum interval
// is 10 s); the per-attempt deadline is what moves a waiting call on.
const (
	keepaliveTime    = 10 * time.Second
	keepaliveTimeout = 5 * time.Second
)

// Option configures a Client.
type Option func(*options)

type options struct {
	token          string
	consistent     bool
	retryFor       time.Duration
	unreachableFor time.Duration
	attemptTimeout time.Duration
	creds          credentials.TransportCredentials
	dialOpts       []grpc.DialOption
	logger         *slog.Logger
	pageSize       int32
}

func defaultOptions() options {
	return options{retryFor: DefaultRetryFor, unreachableFor: DefaultUnreachableFor, attemptTimeout: DefaultAttemptTimeout, pageSize: longfairv1.MaxPageSize}
}

// WithToken sends token as a bearer token with every call. An empty token
// sends none.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithConsistentReads makes every read consistent: the server that answers
// confirms it is the leader and current first, so a read sees every write
// acknowledged before it. Without it, reads come from whichever server is
// called and may briefly lag. One call can choose otherwise with
// ConsistentRead or StaleRead on its context.
func WithConsistentReads(on bool) Option { return func(o *options) { o.consistent = on } }

// WithRetry sets how long a call keeps retrying while servers answer
// Unavailable (d), and how long it keeps trying when no server can be
// reached at all (unreachable). Zero for d turns retries off.
func WithRetry(d, unreachable time.Duration) Option {
	return func(o *options) { o.retryFor, o.unreachableFor = d, unreachable }
}

// WithAttemptTimeout sets how long the first attempt of a unary call waits
// for one server (default DefaultAttemptTimeout) before the client tries
// the next server; once the call has stalled on every server, its
// attempts get twice as long (a merely slow call still completes).
// When the call's context has a deadline, the first attempt gets at most a
// third of the time left (but at least MinAttemptTimeout). Zero turns
// per-attempt deadlines off: an attempt then waits as long as the context
// allows. Streams, which may run long, are bounded by it only while their
// connection is made; keepalive pings end a stream on a server that
// stopped answering.
func WithAttemptTimeout(d time.Duration) Option { return func(o *options) { o.attemptTimeout = d } }

// WithTransportCredentials secures the connections, for example with
// credentials.NewTLS. Without it the connections are plain TCP.
func WithTransportCredentials(c credentials.TransportCredentials) Option {
	return func(o *options) { o.creds = c }
}

// WithDialOptions adds gRPC dial options to every connection.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// WithLogger logs retries at debug level.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithPageSize sets how many items the All* iterators and Journal fetch per
// call (1 to 1000; the default is 1000). AllJobs and AllJournal take their
// request's page size instead when it has one.
func WithPageSize(n int) Option {
	return func(o *options) { o.pageSize = int32(max(1, min(n, longfairv1.MaxPageSize))) }
}
