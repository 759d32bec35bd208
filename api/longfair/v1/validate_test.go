package longfairv1

import (
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func validJob() *SubmitJobRequest {
	return &SubmitJobRequest{
		Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1, "mem": 2e9},
		Tasks: 10, Walltime: durationpb.New(time.Hour), Command: []string{"/bin/sim", "--step", "3"},
	}
}

// wantInvalid checks that err is an InvalidArgument status whose message
// mentions every one of words (the field and the fix).
func wantInvalid(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want InvalidArgument mentioning %q", words)
	}
	s, ok := status.FromError(err)
	if !ok || s.Code() != codes.InvalidArgument {
		t.Fatalf("error %v is not an InvalidArgument status", err)
	}
	for _, w := range words {
		if !strings.Contains(s.Message(), w) {
			t.Errorf("message %q does not mention %q", s.Message(), w)
		}
	}
}

func TestSubmitJobValidation(t *testing.T) {
	if err := validJob().Validate(); err != nil {
		t.Fatalf("a valid job is refused: %v", err)
	}
	cases := []struct {
		name   string
		change func(r *SubmitJobRequest)
		words  []string
	}{
		{"no account", func(r *SubmitJobRequest) { r.Account = "" }, []string{"account", "empty"}},
		{"bad account", func(r *SubmitJobRequest) { r.Account = "a/b" }, []string{"account", "'/'"}},
		{"no demand", func(r *SubmitJobRequest) { r.Demand = nil }, []string{"demand", "cpu=1"}},
		{"zero demand", func(r *SubmitJobRequest) { r.Demand = map[string]float64{"cpu": 0} }, []string{"demand", "zero"}},
		{"NaN demand", func(r *SubmitJobRequest) { r.Demand = map[string]float64{"cpu": math.NaN()} }, []string{"demand[cpu]", "finite"}},
		{"negative demand", func(r *SubmitJobRequest) { r.Demand["mem"] = -1 }, []string{"demand[mem]"}},
		{"infinite demand", func(r *SubmitJobRequest) { r.Demand["cpu"] = math.Inf(1) }, []string{"demand[cpu]", "finite"}},
		// Issue 10 item 1: below one unit of the resource is refused, with
		// the unit and the least that can be asked for.
		{"1e-300 cpu", func(r *SubmitJobRequest) { r.Demand["cpu"] = 1e-300 }, []string{"demand[cpu]", "0.01 core", "at least 0.01"}},
		{"micro cpu", func(r *SubmitJobRequest) { r.Demand["cpu"] = 0.000001 }, []string{"demand[cpu]", "0.01 core"}},
		{"bytes of mem", func(r *SubmitJobRequest) { r.Demand["mem"] = 4 }, []string{"demand[mem]", "MiB", "at least 1048576"}},
		{"half a gpu", func(r *SubmitJobRequest) { r.Demand["gpu"] = 0.5 }, []string{"demand[gpu]", "whole", "at least 1"}},
		{"no tasks", func(r *SubmitJobRequest) { r.Tasks = 0 }, []string{"tasks", "1 to 1000000"}},
		{"too many tasks", func(r *SubmitJobRequest) { r.Tasks = MaxTasksPerJob + 1 }, []string{"tasks"}},
		{"no walltime", func(r *SubmitJobRequest) { r.Walltime = nil }, []string{"walltime", "missing"}},
		{"negative walltime", func(r *SubmitJobRequest) { r.Walltime = durationpb.New(-time.Second) }, []string{"walltime", "positive"}},
		{"long walltime", func(r *SubmitJobRequest) { r.Walltime = durationpb.New(400 * 24 * time.Hour) }, []string{"walltime", "at most"}},
		{"no command", func(r *SubmitJobRequest) { r.Command = nil }, []string{"command", "program"}},
		{"empty program", func(r *SubmitJobRequest) { r.Command = []string{""} }, []string{"program name"}},
		{"attempts", func(r *SubmitJobRequest) { r.MaxAttempts = 101 }, []string{"max_attempts", "1 to 100"}},
		{"request id", func(r *SubmitJobRequest) { r.RequestId = strings.Repeat("x", 65) }, []string{"request_id", "at most 64"}},
		// Defined in the API ahead of the servers: refused, not ignored.
		{"throttle", func(r *SubmitJobRequest) { r.ArrayThrottle = -1 }, []string{"array_throttle", "at once"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validJob()
			c.change(r)
			wantInvalid(t, r.Validate(), c.words...)
		})
	}
}

func TestOtherValidation(t *testing.T) {
	cases := []struct {
		name  string
		req   Validator
		words []string
	}{
		{"grant amount", &CreateGrantRequest{Account: "phys", AmountMicroSu: 0}, []string{"amount_micro_su", "positive"}},
		{"grant expiry", &CreateGrantRequest{Account: "phys", AmountMicroSu: 1, ExpiresAt: &timestamppb.Timestamp{Seconds: -5}}, []string{"expires_at"}},
		{"update nothing", &UpdateAccountRequest{Name: "phys"}, []string{"nothing to update"}},
		{"set and clear", &UpdateAccountRequest{Name: "phys", Weight: proto.Float64(1), ClearWeight: true}, []string{"weight", "clear_weight"}},
		{"user twice", &CreateUserRequest{Name: "ann", Accounts: []string{"a", "a"}}, []string{"twice"}},
		{"page size", &ListJobsRequest{PageSize: -1}, []string{"page_size"}},
		{"job state", &ListJobsRequest{States: []JobState{42}}, []string{"states", "PENDING"}},
		{"jobs window backwards", &ListJobsRequest{Since: &timestamppb.Timestamp{Seconds: 2e9}, Until: &timestamppb.Timestamp{Seconds: 1e9}}, []string{"until", "before since", "since ≤ until"}},
		{"jobs window before 1970", &ListJobsRequest{Since: &timestamppb.Timestamp{Seconds: -5}}, []string{"since", "1970"}},
		{"job id", &GetJobRequest{}, []string{"job_id"}},
		{"explain job id", &ExplainJobRequest{}, []string{"job_id"}},
		{"tasks of no job", &ListTasksRequest{}, []string{"job_id"}},
		{"tasks of a job and jobs", &ListTasksRequest{JobId: 1, JobIds: []uint64{2}}, []string{"job_id 1", "job_ids", "one"}},
		{"tasks of a job twice", &ListTasksRequest{JobIds: []uint64{2, 3, 2}}, []string{"job 2", "twice"}},
		{"tasks of job 0", &ListTasksRequest{JobIds: []uint64{2, 0}}, []string{"job_ids", "0"}},
		{"tasks of too many jobs", &ListTasksRequest{JobIds: seq(MaxTaskListJobs + 1)}, []string{"1001 jobs", "at most 1000"}},
		{"explain no jobs", &ExplainJobsRequest{}, []string{"job_ids", "empty"}},
		{"explain a job twice", &ExplainJobsRequest{JobIds: []uint64{4, 4}}, []string{"job 4", "twice"}},
		{"explain too many jobs", &ExplainJobsRequest{JobIds: seq(MaxTaskListJobs + 1)}, []string{"1001 jobs"}},
		{"usage range", &UsageReportRequest{From: timestamppb.New(time.Unix(100, 0)), To: timestamppb.New(time.Unix(50, 0))}, []string{"from", "before"}},
		{"usage missing", &UsageReportRequest{}, []string{"from and to"}},
		{"settings empty", &UpdateSettingsRequest{}, []string{"nothing to update"}},
		{"quantum", &UpdateSettingsRequest{Quantum: durationpb.New(0)}, []string{"quantum", "positive"}},
		{"billing rule", &UpdateSettingsRequest{BillingRule: proto.String("avg")}, []string{"billing_rule", "avg", "max", "sum"}},
		{"peer", &AddPeerRequest{Id: "s2"}, []string{"raft_address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantInvalid(t, c.req.Validate(), c.words...) })
	}
}

// requestTypes are fresh values of every request type, for the wire fuzzer.
func requestTypes() []func() proto.Message {
	return []func() proto.Message{
		func() proto.Message { return &CreateAccountRequest{} },
		func() proto.Message { return &UpdateAccountRequest{} },
		func() proto.Message { return &CreateUserRequest{} },
		func() proto.Message { return &MembershipRequest{} },
		func() proto.Message { return &CreateGrantRequest{} },
		func() proto.Message { return &ListGrantsRequest{} },
		func() proto.Message { return &SubmitJobRequest{} },
		func() proto.Message { return &ListJobsRequest{} },
		func() proto.Message { return &ListTasksRequest{} },
		func() proto.Message { return &UsageReportRequest{} },
		func() proto.Message { return &UpdateSettingsRequest{} },
		func() proto.Message { return &AddPeerRequest{} },
		func() proto.Message { return &ListJournalRequest{} },
	}
}

// FuzzValidateWire decodes arbitrary bytes as each request type and
// validates it: never a panic, and a refusal is always InvalidArgument.
func FuzzValidateWire(f *testing.F) {
	for i, seed := range []proto.Message{
		validJob(),
		&CreateGrantRequest{Id: "g1", Account: "phys", AmountMicroSu: 5, ExpiresAt: timestamppb.New(time.Unix(2e9, 0))},
		&UsageReportRequest{From: timestamppb.New(time.Unix(1, 0)), To: timestamppb.New(time.Unix(2, 0)), GroupBy: UsageGroupBy_USAGE_GROUP_BY_USER},
		&UpdateSettingsRequest{Policy: proto.String("hmrf"), Quantum: durationpb.New(time.Minute), BillingWeights: map[string]float64{"cpu": 1}},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	types := requestTypes()
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		msg := types[int(kind)%len(types)]()
		if err := proto.Unmarshal(data, msg); err != nil {
			return
		}
		err := msg.(Validator).Validate()
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%T.Validate returned %v, not InvalidArgument", msg, err)
		}
	})
}

// FuzzSubmitJobFields drives SubmitJobRequest.Validate field by field, and
// checks the promise servers rely on: an accepted request has a usable
// demand, task count, walltime and command.
func FuzzSubmitJobFields(f *testing.F) {
	f.Add("phys", "ann", "cpu", 1.0, int64(10), int64(3600), int32(0), "/bin/true", int32(0))
	f.Add("", "ann", "gpu", math.Inf(1), int64(-1), int64(-1), int32(-5), "", int32(-1))
	f.Fuzz(func(t *testing.T, account, user, resource string, qty float64, tasks, secs int64, nanos int32, prog string, attempts int32) {
		r := &SubmitJobRequest{
			Account: account, User: user, Demand: map[string]float64{resource: qty}, Tasks: tasks,
			Walltime: &durationpb.Duration{Seconds: secs, Nanos: nanos}, Command: []string{prog}, MaxAttempts: attempts,
		}
		err := r.Validate()
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("refusal %v is not InvalidArgument", err)
			}
			return
		}
		if !(qty > 0) || math.IsInf(qty, 0) || tasks < 1 || tasks > MaxTasksPerJob || prog == "" ||
			r.Walltime.AsDuration() <= 0 || attempts < 0 || attempts > MaxAttemptsLimit {
			t.Fatalf("accepted an unusable job: %v", r)
		}
	})
}

// seq is 1 to n.
func seq(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}
