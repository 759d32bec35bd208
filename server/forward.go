package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// forwardedByMetadataKey marks a request a follower forwarded, with the
// follower's node id. A server that receives a forwarded request and is not
// the leader either answers "retry" instead of forwarding again, so a
// request never circles between servers while leadership moves.
const forwardedByMetadataKey = "longfair-forwarded-by"

// defaultForwardTimeout bounds a forwarded unary call whose caller set no
// deadline, so a caller is never stuck behind a leader that stopped
// answering.
const defaultForwardTimeout = 30 * time.Second

// forwardAttemptTimeout bounds one attempt to forward a call that may be
// sent again (a read, or a write longfairv1.RepeatableWrite names) to the
// leader; each further attempt gets twice as long. Besides, a forward is
// given up as soon as this server sees the leader change (a paused
// leader is replaced after about an election timeout). Other writes are
// never given up on a timer: only a change of leader, which the caller
// learns may have left the write applied.
const forwardAttemptTimeout = 2 * time.Second

// Keepalive pings on the connections to the leader find one that stopped
// answering while no call is waiting (gRPC's minimum interval is 10 s).
const (
	forwardKeepaliveTime    = 10 * time.Second
	forwardKeepaliveTimeout = 5 * time.Second
)

// errNoLeader is what every server answers while no leader is elected.
var errNoLeader = status.Error(codes.Unavailable, "no leader elected yet; retry in a few seconds")

// forwarder keeps one client connection per leader address.
type forwarder struct {
	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool
	// creds secure the connections (tls.go); nil is plain TCP.
	creds credentials.TransportCredentials
}

// setCredentials sets how connections made from now on are secured.
func (f *forwarder) setCredentials(c credentials.TransportCredentials) {
	f.mu.Lock()
	f.creds = c
	f.mu.Unlock()
}

func newForwarder() *forwarder { return &forwarder{conns: make(map[string]*grpc.ClientConn)} }

// conn returns the connection to a server (the leader), with keepalive
// pings, which servers allow (server.go).
func (f *forwarder) conn(addr string) (*grpc.ClientConn, error) {
	return f.dial(addr, addr, grpc.WithKeepaliveParams(keepalive.ClientParameters{
		Time: forwardKeepaliveTime, Timeout: forwardKeepaliveTimeout, PermitWithoutStream: true}))
}

// workerConn returns the connection to a worker's gRPC service, without
// keepalive pings (a worker's server refuses frequent ones).
func (f *forwarder) workerConn(addr string) (*grpc.ClientConn, error) {
	return f.dial("worker "+addr, addr)
}

// dial returns the connection cached under key, or makes one to addr.
func (f *forwarder) dial(key, addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, status.Error(codes.Unavailable, "this server is shutting down; retry on another server")
	}
	if c, ok := f.conns[key]; ok {
		return c, nil
	}
	creds := f.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	c, err := grpc.NewClient(addr, slices.Concat(opts, []grpc.DialOption{grpc.WithTransportCredentials(creds)}, longfairv1.DialOptions())...)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "connect to %s: %v", addr, err)
	}
	f.conns[key] = c
	return c, nil
}

func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for addr, c := range f.conns {
		c.Close()
		delete(f.conns, addr)
	}
}

// route decides where a call is served: "" means here, otherwise the gRPC
// address of the leader to forward it to. For a consistent read served
// here it first confirms this server still leads and is current.
func (s *Server) route(ctx context.Context, fullMethod string) (string, error) {
	kind, _ := methodKindOf(fullMethod)
	switch kind {
	case kindLocal:
		return "", nil
	case kindRead:
		consistent, err := consistentRequested(ctx)
		if err != nil {
			return "", err
		}
		if !consistent {
			// A server whose state diverged answers no read from it.
			if d := s.fsm.Diverged(); d != nil {
				return "", divergedStatus(d)
			}
			return "", nil
		}
	}
	if s.IsLeader() {
		if d := s.fsm.Diverged(); d != nil && fullMethod != apiPrefix+"Operator/VerifyState" {
			// Its answers and its results would come from damaged state;
			// it hands leadership to a server that agrees with most.
			s.stepDownDiverged()
			return "", divergedStatus(d)
		}
		if kind == kindRead {
			return "", s.confirmLeadership(ctx)
		}
		return "", nil
	}
	if by := forwardedBy(ctx); by != "" {
		return "", status.Errorf(codes.Unavailable, "leadership moved while server %s forwarded this request here; retry in a moment", by)
	}
	_, addr, err := s.leaderGRPC()
	return addr, err
}

// leaderGRPC returns the leader's node id and gRPC address.
func (s *Server) leaderGRPC() (id, addr string, err error) {
	_, lid := s.raft.LeaderWithID()
	if lid == "" {
		return "", "", errNoLeader
	}
	if string(lid) == s.cfg.NodeID {
		return string(lid), s.GRPCAddr(), nil
	}
	m, ok := s.gossip.Server(string(lid))
	if !ok || m.GRPC == "" {
		return string(lid), "", status.Errorf(codes.Unavailable, "leader %s is elected but its gRPC address has not reached this server through gossip yet; retry in a few seconds", lid)
	}
	return string(lid), m.GRPC, nil
}

// confirmLeadership makes a read on the leader linearizable: a quorum
// still follows this leader, and everything committed before it took over
// has been applied to the FSM.
func (s *Server) confirmLeadership(ctx context.Context) error {
	if err := waitFuture(ctx, s.raft.VerifyLeader()); err != nil {
		return raftError(err)
	}
	if s.leaderReady.Load() {
		return nil
	}
	if err := waitFuture(ctx, s.raft.Barrier(timeoutFrom(ctx, 5*time.Second))); err != nil {
		return raftError(err)
	}
	return nil
}

func consistentRequested(ctx context.Context) (bool, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(longfairv1.ConsistentReadMetadataKey)
	if len(vals) == 0 {
		return false, nil
	}
	v, err := strconv.ParseBool(vals[len(vals)-1])
	if err != nil {
		return false, status.Errorf(codes.InvalidArgument, "metadata %s is %q: set it to \"true\" for a consistent read or leave it out", longfairv1.ConsistentReadMetadataKey, vals[len(vals)-1])
	}
	return v, nil
}

func forwardedBy(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(forwardedByMetadataKey); len(v) > 0 {
		return v[0]
	}
	return ""
}

// outgoingContext carries the caller's metadata (bearer token, read
// consistency) and deadline on to the leader, marked as forwarded.
func (s *Server) outgoingContext(ctx context.Context) context.Context {
	in, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for k, v := range in {
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") || k == "content-type" || k == "user-agent" || k == forwardedByMetadataKey {
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	out.Set(forwardedByMetadataKey, s.cfg.NodeID)
	return metadata.NewOutgoingContext(ctx, out)
}

// unaryInterceptor serves a call here or forwards it to the leader.
func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	addr, err := s.route(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		return handler(ctx, req)
	}
	return s.forwardUnary(ctx, addr, info.FullMethod, req, handler)
}

// forwardUnary forwards a call to the leader at addr. When the leader
// stops answering — this server sees another leader (or an election), or
// an attempt that may be repeated outlives its deadline — it gives up on
// that leader: a call that may be sent again goes to the new leader (or is
// served here by handler if this server now leads and handler is not
// nil); any other write is answered with what is known of it, since the
// old leader may still apply it.
func (s *Server) forwardUnary(ctx context.Context, addr, method string, req any, handler grpc.UnaryHandler) (any, error) {
	_, outType, err := messageTypes(method)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultForwardTimeout)
		defer cancel()
	}
	kind, _ := methodKindOf(method)
	repeatable := kind == kindRead || longfairv1.RepeatableWrite(req)
	for attempt := 0; ; attempt++ {
		conn, err := s.fwd.conn(addr)
		if err != nil {
			return nil, err
		}
		// Reads are not cut short: a stopped leader is given up when
		// another is elected (the watch) or by keepalive, while a
		// deadline would only repeat a slow read (Ledger/Verify) on the
		// same leader. A repeatable write that got no answer in time is
		// sent again, and is applied once.
		limit := time.Duration(0)
		if repeatable && kind != kindRead && !longfairv1.LongRunning(method) {
			limit = forwardAttemptTimeout << min(attempt, 4)
		}
		reply := outType.New().Interface()
		why, err := s.forwardAttempt(ctx, conn, addr, method, req, reply, limit)
		if err == nil {
			return reply, nil
		}
		if why == "" || ctx.Err() != nil {
			return nil, forwardError(err, addr)
		}
		switch {
		case longfairv1.NeverRepeat(req):
			return nil, status.Errorf(codes.Unknown, "the leader at %s %s while it held this request, so its outcome is unknown; it is not sent again because a repeat would create a second one: check with 'longfair acl token list' before creating another token", addr, why)
		case !repeatable:
			return nil, status.Errorf(codes.Unavailable, "the leader at %s %s while it held this write: it may or may not have been applied; check, or retry (a retry of a create that was applied is refused as existing)", addr, why)
		}
		s.logger.Debug("forward gave up on the leader; forwarding to the new one", "method", method, "leader", addr, "reason", why)
		if addr, err = s.awaitLeader(ctx, method); err != nil {
			return nil, err
		}
		if addr == "" {
			if handler == nil {
				return nil, status.Error(codes.Unavailable, "leadership moved to this server while it forwarded the request; retry")
			}
			return handler(ctx, req)
		}
	}
}

// forwardAttempt makes one attempt, bounded by limit when it is not zero
// and given up when this server sees a leader other than addr's. why says
// why it was given up, or is empty when the attempt ended otherwise.
func (s *Server) forwardAttempt(ctx context.Context, conn *grpc.ClientConn, addr, method string, req, reply any, limit time.Duration) (why string, err error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	if limit > 0 {
		actx, cancel = context.WithTimeout(actx, limit)
		defer cancel()
	}
	var moved atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			// Take the channel before looking, so a change between
			// the look and the wait is not missed.
			ch := s.leaders.changed()
			if _, cur, err := s.leaderGRPC(); cur != addr || err != nil {
				moved.Store(true)
				cancel()
				return
			}
			select {
			case <-ch:
			case <-actx.Done():
				return
			}
		}
	}()
	err = conn.Invoke(s.outgoingContext(actx), method, req, reply)
	cancel()
	<-watched
	code := status.Code(err)
	switch {
	case err == nil || ctx.Err() != nil:
		return "", err
	case code != codes.Canceled && code != codes.DeadlineExceeded:
		// The leader's own answer, even if it came as it lost office.
		return "", err
	case moved.Load():
		return "lost its leadership", err
	case limit > 0 && code == codes.DeadlineExceeded:
		return fmt.Sprintf("did not answer within %v", limit), err
	}
	return "", err
}

// awaitLeader routes a call again after its leader was given up: the
// gRPC address of the new leader, "" when this server leads now. While
// no leader is elected (or its address has not come through gossip) it
// waits, as long as ctx allows.
func (s *Server) awaitLeader(ctx context.Context, method string) (string, error) {
	for {
		ch := s.leaders.changed()
		addr, err := s.route(ctx, method)
		if err == nil || status.Code(err) != codes.Unavailable {
			return addr, err
		}
		select {
		case <-ch:
		case <-time.After(awaitLeaderPoll):
		case <-ctx.Done():
			return "", err
		}
	}
}

// awaitLeaderPoll is how often awaitLeader looks again without a change
// of leader: gossip brings a new leader's address on its own schedule.
const awaitLeaderPoll = 50 * time.Millisecond

// streamInterceptor serves a stream here or proxies it to the leader.
func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	addr, err := s.route(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if addr == "" {
		return handler(srv, ss)
	}
	return s.forwardStream(ss, info, addr)
}

func (s *Server) forwardStream(ss grpc.ServerStream, info *grpc.StreamServerInfo, addr string) error {
	inType, outType, err := messageTypes(info.FullMethod)
	if err != nil {
		return err
	}
	conn, err := s.fwd.conn(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	desc := &grpc.StreamDesc{StreamName: info.FullMethod, ServerStreams: info.IsServerStream, ClientStreams: info.IsClientStream}
	cs, err := conn.NewStream(s.outgoingContext(ctx), desc, info.FullMethod)
	if err != nil {
		return forwardError(err, addr)
	}
	// Caller → leader.
	upErr := make(chan error, 1)
	go func() {
		for {
			m := inType.New().Interface()
			if err := ss.RecvMsg(m); err != nil {
				if errors.Is(err, io.EOF) {
					upErr <- cs.CloseSend()
					return
				}
				cancel()
				upErr <- err
				return
			}
			if err := cs.SendMsg(m); err != nil {
				// The leader's reason arrives through RecvMsg below.
				upErr <- nil
				return
			}
		}
	}()
	// Leader → caller.
	for {
		m := outType.New().Interface()
		if err := cs.RecvMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			select {
			case uerr := <-upErr:
				if uerr != nil && status.Code(err) == codes.Canceled {
					return uerr
				}
			default:
			}
			return forwardError(err, addr)
		}
		if err := ss.SendMsg(m); err != nil {
			return err
		}
		if !info.IsServerStream {
			return nil
		}
	}
}

// forwardError keeps the leader's own answer, and says where a call went
// when the leader could not be reached.
func forwardError(err error, addr string) error {
	st, ok := status.FromError(err)
	if !ok {
		return status.Errorf(codes.Unavailable, "forward to the leader at %s: %v; retry in a few seconds", addr, err)
	}
	if st.Code() == codes.Unavailable && !strings.Contains(st.Message(), "retry") {
		return status.Errorf(codes.Unavailable, "cannot reach the leader at %s (%s); retry in a few seconds", addr, st.Message())
	}
	return err
}

// messageTypes finds a method's request and response types in the
// protobuf registry, which the generated api code fills in.
func messageTypes(fullMethod string) (in, out protoreflect.MessageType, err error) {
	name := strings.TrimPrefix(fullMethod, "/")
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return nil, nil, status.Errorf(codes.Unimplemented, "method %q is not a gRPC method name", fullMethod)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name[:i]))
	if err != nil {
		return nil, nil, status.Errorf(codes.Unimplemented, "service of %s is unknown: %v", fullMethod, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, nil, status.Errorf(codes.Unimplemented, "%s is not a service", name[:i])
	}
	md := sd.Methods().ByName(protoreflect.Name(name[i+1:]))
	if md == nil {
		return nil, nil, status.Errorf(codes.Unimplemented, "method %s is unknown", fullMethod)
	}
	if in, err = protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName()); err != nil {
		return nil, nil, status.Errorf(codes.Internal, "request type of %s: %v", fullMethod, err)
	}
	if out, err = protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName()); err != nil {
		return nil, nil, status.Errorf(codes.Internal, "response type of %s: %v", fullMethod, err)
	}
	return in, out, nil
}

// timeoutFrom is the time left before ctx's deadline, or def without one.
func timeoutFrom(ctx context.Context, def time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d > 0 {
			return d
		}
		return time.Millisecond
	}
	return def
}

// waitFuture waits for a Raft future or for ctx, whichever ends first.
// Raft futures cannot be cancelled; a caller that gives up leaves the
// operation to finish (or fail) on its own.
func waitFuture(ctx context.Context, f interface{ Error() error }) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errShuttingDown is returned to calls that arrive while the server stops.
var errShuttingDown = status.Error(codes.Unavailable, "this server is shutting down; retry on another server")
