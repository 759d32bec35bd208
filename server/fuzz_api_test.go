package server_test

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ledger"
)

// fuzzMethod is one RPC the running server registered, with its request
// type from the generated descriptors.
type fuzzMethod struct {
	name    string // /package.Service/Method
	request protoreflect.MessageType
	reply   protoreflect.MessageType
	stream  bool // server streams its answer
}

// registeredMethods lists every unary and server-streaming method s
// serves, sorted by name: new RPCs are fuzzed without a change here.
// Client- and bidirectional streams are left out: the worker stream has
// its own fuzz test (fuzz_stream_test.go), reflection is grpc-go's, and
// RestoreSnapshot is in unsafeForAdmin's reasoning.
func registeredMethods(tb testing.TB, s *server.Server) []fuzzMethod {
	tb.Helper()
	var out []fuzzMethod
	for svc, info := range s.GRPCServer().GetServiceInfo() {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			tb.Fatalf("service %s has no descriptor: %v", svc, err)
		}
		sd := d.(protoreflect.ServiceDescriptor)
		for _, m := range info.Methods {
			if m.IsClientStream {
				continue
			}
			md := sd.Methods().ByName(protoreflect.Name(m.Name))
			req, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
			if err != nil {
				tb.Fatalf("%s/%s: request type: %v", svc, m.Name, err)
			}
			rep, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
			if err != nil {
				tb.Fatalf("%s/%s: reply type: %v", svc, m.Name, err)
			}
			out = append(out, fuzzMethod{name: "/" + svc + "/" + m.Name, request: req, reply: rep, stream: m.IsServerStream})
		}
	}
	slices.SortFunc(out, func(a, b fuzzMethod) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	return out
}

// unsafeForAdmin are methods whose well-formed admin calls take the one
// server of the fuzz cluster out of service, as they would a real one:
// adding a voter that does not exist leaves it without a quorum, removing
// itself leaves no group, a restore replaces the state. The fuzzer calls
// them with the user token (and no token) only; their admin paths have
// their own tests.
var unsafeForAdmin = map[string]bool{
	"/longfair.v1.Operator/AddPeer":    true,
	"/longfair.v1.Operator/RemovePeer": true,
}

// answerOK reports whether code is an answer the API may give to any
// request: an error that tells the caller what was wrong. Unknown,
// Internal and DataLoss mean the server failed on the input (a bug);
// Unimplemented means a registered method does not exist; a deadline
// means it hung. Unavailable is a server-streaming method's answer when
// what it proxies to (a worker) cannot be reached.
func answerOK(m fuzzMethod, code codes.Code) bool {
	switch code {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.Unauthenticated, codes.FailedPrecondition, codes.ResourceExhausted, codes.OutOfRange, codes.Aborted:
		return true
	case codes.Unavailable:
		return m.stream
	}
	return false
}

// fuzzServer is the one server a fuzz target calls, with tokens.
type fuzzServer struct {
	c          *testcluster.ACLCluster
	s          *server.Server
	conn       *grpc.ClientConn
	admin      string
	adminID    string
	user       string
	methods    []fuzzMethod
	calls      atomic.Int64
	verifyEach int64
}

// newFuzzServer starts one real server (single-node Raft, ACL on) with an
// account, a member user with a user token, a grant and a job, so that
// requests naming them reach past the lookups.
func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	c := testcluster.NewACL(tb, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := c.WaitLeader(ctx)
	admin, adminTok := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_ADMIN, "", 0)
	fs := &fuzzServer{c: c, s: s, conn: c.Conn(s), admin: admin, adminID: adminTok.GetId(), verifyEach: 64}
	actx := testcluster.As(ctx, admin)
	if _, err := longfairv1.NewAccountsClient(fs.conn).CreateAccount(actx, &longfairv1.CreateAccountRequest{Name: "fz"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := longfairv1.NewUsersClient(fs.conn).CreateUser(actx, &longfairv1.CreateUserRequest{Name: "fz-user", Accounts: []string{"fz"}}); err != nil {
		tb.Fatal(err)
	}
	if _, err := longfairv1.NewGrantsClient(fs.conn).CreateGrant(actx, &longfairv1.CreateGrantRequest{Id: "fz-grant", Account: "fz", AmountMicroSu: 1e15}); err != nil {
		tb.Fatal(err)
	}
	fs.user, _ = c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "fz-user", 0)
	if _, err := longfairv1.NewJobsClient(fs.conn).SubmitJob(testcluster.As(ctx, fs.user), fuzzSeedJob()); err != nil {
		tb.Fatal(err)
	}
	fs.methods = registeredMethods(tb, s)
	return fs
}

func fuzzSeedJob() *longfairv1.SubmitJobRequest {
	return &longfairv1.SubmitJobRequest{Account: "fz", User: "fz-user", Name: "fz", Demand: map[string]float64{"cpu": 1},
		Tasks: 1000, Walltime: durationpb.New(time.Minute), Command: []string{"true"}, RequestId: "fz-seed"}
}

// call sends req to m with the secret (none if empty) and returns the
// answer's status.
func (fs *fuzzServer) call(m fuzzMethod, secret string, req proto.Message) *status.Status {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if secret != "" {
		ctx = testcluster.As(ctx, secret)
	}
	if !m.stream {
		return status.Convert(fs.conn.Invoke(ctx, m.name, req, m.reply.New().Interface()))
	}
	st, err := fs.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, m.name)
	if err != nil {
		return status.Convert(err)
	}
	if err := st.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return status.Convert(err)
	}
	if err := st.CloseSend(); err != nil {
		return status.Convert(err)
	}
	// A stream that answers at all has shown it handled the request; some
	// never end by design (a health watch, a follow=true read), so the
	// first message is enough.
	if err := st.RecvMsg(m.reply.New().Interface()); err != nil && !errors.Is(err, io.EOF) {
		return status.Convert(err)
	}
	return status.New(codes.OK, "")
}

// healthy checks that the server still serves: the health service and an
// admin read both answer, and every so many calls its ledger verifies.
func (fs *fuzzServer) healthy(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r, err := healthpb.NewHealthClient(fs.conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health check after the call: %v %v", r, err)
	}
	if _, err := longfairv1.NewOperatorClient(fs.conn).GetLeader(testcluster.As(ctx, fs.admin), &longfairv1.GetLeaderRequest{}); err != nil {
		t.Fatalf("GetLeader after the call: %v", err)
	}
	if fs.calls.Add(1)%fs.verifyEach == 0 {
		fs.verify(t)
	}
}

// verify checks the ledger through the API and the FSM directly.
func (fs *fuzzServer) verify(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := longfairv1.NewLedgerClient(fs.conn).Verify(testcluster.As(ctx, fs.admin), &longfairv1.VerifyRequest{})
	if err != nil || !r.GetOk() {
		tb.Fatalf("ledger verify: %v %v", r, err)
	}
	if _, err := fs.s.FSM().Verify(); err != nil {
		tb.Fatalf("FSM verify: %v", err)
	}
	// However the worker stream reported an attempt (twice, late, out of
	// order), it is charged at most once.
	charged := map[string]bool{}
	for after := uint64(0); ; {
		page, next, err := fs.s.FSM().Journal("", after, 0)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range page {
			if e.Kind != ledger.EntryCharge {
				continue
			}
			if charged[e.ID] {
				tb.Fatalf("attempt %s was charged twice", e.ID)
			}
			charged[e.ID] = true
		}
		if next == 0 || len(page) == 0 {
			break
		}
		after = next
	}
}

// fuzzSeeds are well-formed requests, by method; every other method is
// seeded with its empty request.
func fuzzSeeds() map[string][]proto.Message {
	ts := timestamppb.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	return map[string][]proto.Message{
		"/longfair.v1.Accounts/CreateAccount": {&longfairv1.CreateAccountRequest{Name: "fz2", Weight: proto.Float64(2)}},
		"/longfair.v1.Accounts/GetAccount":    {&longfairv1.GetAccountRequest{Name: "fz"}},
		"/longfair.v1.Accounts/ListAccounts":  {&longfairv1.ListAccountsRequest{PageSize: 10}},
		"/longfair.v1.Accounts/UpdateAccount": {&longfairv1.UpdateAccountRequest{Name: "fz", Weight: proto.Float64(3)}},
		"/longfair.v1.Users/CreateUser":       {&longfairv1.CreateUserRequest{Name: "fz2-user", Accounts: []string{"fz"}}},
		"/longfair.v1.Users/GetUser":          {&longfairv1.GetUserRequest{Name: "fz-user"}},
		"/longfair.v1.Users/AddMembership":    {&longfairv1.MembershipRequest{User: "fz-user", Account: "fz"}},
		"/longfair.v1.Grants/CreateGrant":     {&longfairv1.CreateGrantRequest{Id: "g2", Account: "fz", AmountMicroSu: 5e6, ExpiresAt: ts, Note: "fuzz"}},
		"/longfair.v1.Grants/ListGrants":      {&longfairv1.ListGrantsRequest{Account: "fz"}},
		"/longfair.v1.Jobs/SubmitJob": {fuzzSeedJob(), &longfairv1.SubmitJobRequest{Account: "fz", User: "fz-user", Name: "m",
			Demand: map[string]float64{"cpu": 0.5, "mem": 1 << 30, "mic": 1}, Tasks: 3, Walltime: durationpb.New(time.Hour),
			Command: []string{"sh", "-c", "echo hi"}, MaxAttempts: 2, RequestId: "fz-2"}},
		"/longfair.v1.Jobs/CancelJob": {&longfairv1.CancelJobRequest{JobId: 1}},
		"/longfair.v1.Jobs/GetJob":    {&longfairv1.GetJobRequest{JobId: 1}},
		"/longfair.v1.Jobs/ListJobs": {&longfairv1.ListJobsRequest{Account: "fz", States: []longfairv1.JobState{longfairv1.JobState_JOB_STATE_PENDING}},
			&longfairv1.ListJobsRequest{Since: timestamppb.New(time.Unix(1, 0)), Until: timestamppb.New(time.Unix(0, math.MaxInt64))}},
		"/longfair.v1.Jobs/ListTasks":              {&longfairv1.ListTasksRequest{JobId: 1, PageSize: 5}, &longfairv1.ListTasksRequest{JobIds: []uint64{1, 2}, PageSize: 1}},
		"/longfair.v1.Jobs/ExplainJobs":            {&longfairv1.ExplainJobsRequest{JobIds: []uint64{1, 2}}},
		"/longfair.v1.Ledger/GetBalance":           {&longfairv1.GetBalanceRequest{Account: "fz"}},
		"/longfair.v1.Ledger/ListJournal":          {&longfairv1.ListJournalRequest{Account: "fz", PageSize: 3}},
		"/longfair.v1.Ledger/UsageReport":          {&longfairv1.UsageReportRequest{From: timestamppb.New(time.Unix(0, 0)), To: ts, GroupBy: longfairv1.UsageGroupBy_USAGE_GROUP_BY_USER}},
		"/longfair.v1.Fairness/GetFairnessReport":  {&longfairv1.GetFairnessReportRequest{Account: "fz"}},
		"/longfair.v1.Fairness/GetFairnessHistory": {&longfairv1.GetFairnessHistoryRequest{Accounts: []string{"fz"}}},
		"/longfair.v1.ACL/CreateToken":             {&longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_USER, User: "fz-user", Ttl: durationpb.New(time.Hour)}},
		"/longfair.v1.Groups/SetGroupWeight":       {&longfairv1.SetGroupWeightRequest{Path: "physics", Weight: 2}},
		"/longfair.v1.Groups/SetAccountGroup":      {&longfairv1.SetAccountGroupRequest{Account: "fz", Group: "physics"}},
		"/longfair.v1.Queues/CreateLatencyQueue":   {&longfairv1.CreateLatencyQueueRequest{Account: "fz", Period: durationpb.New(time.Hour), Deadline: durationpb.New(time.Minute), Burst: map[string]float64{"cpu": 4}}},
		"/longfair.v1.Workers/ReadTaskOutput":      {&longfairv1.ReadTaskOutputRequest{JobId: 1, Task: 0, Attempt: 1, Stream: longfairv1.OutputStream_OUTPUT_STREAM_STDOUT}},
		"/longfair.v1.Operator/SaveSnapshot":       {&longfairv1.SaveSnapshotRequest{}},
	}
}

// FuzzAPI sends every public request type, decoded from the fuzzer's
// bytes (protobuf, or JSON when they start with '{'), to a real server with an admin token, a user token and no token,
// and checks that each answer is a refusal that tells the caller what was
// wrong (never Internal or Unknown), that the server keeps serving and
// that its ledger still verifies. `go test` runs the seeds: a well-formed
// request of each type; `make fuzz` searches.
func FuzzAPI(f *testing.F) {
	fs := newFuzzServer(f)
	seeds := fuzzSeeds()
	for i, m := range fs.methods {
		reqs := seeds[m.name]
		if len(reqs) == 0 {
			reqs = []proto.Message{m.request.New().Interface()}
		}
		for _, r := range reqs {
			b, err := proto.Marshal(r)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint16(i), b)
			// The same request as JSON: mutating its text changes field
			// values and names as a person typing a request would.
			j, err := protojson.Marshal(r)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint16(i), j)
		}
	}
	f.Cleanup(func() { fs.verify(f) })
	f.Fuzz(func(t *testing.T, which uint16, body []byte) {
		m := fs.methods[int(which)%len(fs.methods)]
		req := m.request.New().Interface()
		decode := proto.Unmarshal
		if len(body) > 0 && body[0] == '{' {
			decode = protojson.Unmarshal
		}
		if err := decode(body, req); err != nil {
			// Not a request a gRPC client could send: grpc-go refuses
			// undecodable bytes before any longfair code runs.
			return
		}
		secrets := []string{fs.user, ""}
		if !unsafeForAdmin[m.name] && !revokesAdmin(m, req, fs.adminID) {
			secrets = append(secrets, fs.admin)
		}
		for _, secret := range secrets {
			st := fs.call(m, secret, req)
			if !answerOK(m, st.Code()) {
				t.Errorf("%s(%v) with %s: %v: %s", m.name, req, who(fs, secret), st.Code(), st.Message())
			}
			fs.healthy(t)
		}
	})
}

// revokesAdmin reports whether req would revoke the fuzzer's own admin
// token, after which no admin call could be checked.
func revokesAdmin(m fuzzMethod, req proto.Message, adminID string) bool {
	r, ok := req.(*longfairv1.RevokeTokenRequest)
	return ok && m.name == "/longfair.v1.ACL/RevokeToken" && r.GetId() == adminID
}

func who(fs *fuzzServer, secret string) string {
	switch secret {
	case fs.admin:
		return "the admin token"
	case fs.user:
		return "a user token"
	}
	return "no token"
}
