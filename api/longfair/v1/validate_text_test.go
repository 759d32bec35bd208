package longfairv1

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// validRequests holds one valid request of every request type that has a
// string field (the completeness check below keeps it so).
func validRequests() []Validator {
	s := func(v string) *string { return &v }
	return []Validator{
		&CreateAccountRequest{Name: "phys"},
		&GetAccountRequest{Name: "phys"},
		&ListAccountsRequest{PageToken: "abc"},
		&UpdateAccountRequest{Name: "phys", ClearWeight: true},
		&SetLimitsRequest{Account: "phys", Limits: &Limits{MaxJobs: 10}},
		&UpdateJobRequest{JobId: 1, Name: proto.String("n"), Dependency: proto.String("afterok:2")},
		&CreateTokenRequest{Role: TokenRole_TOKEN_ROLE_WORKER, User: "ann", Description: "rack 12", Node: "c01"},
		&ListTokensRequest{PageToken: "abc"},
		&RevokeTokenRequest{Id: "t1"},
		&GetFairnessReportRequest{Account: "phys"},
		&GetFairnessHistoryRequest{Accounts: []string{"phys"}},
		&CreateGrantRequest{Id: "g1", Account: "phys", AmountMicroSu: 1, Note: "2026 allocation"},
		&ListGrantsRequest{Account: "phys", PageToken: "abc"},
		&SetGroupWeightRequest{Path: "science/phys", Weight: 1},
		&RemoveGroupRequest{Path: "science"},
		&SetAccountGroupRequest{Account: "phys", Group: "science"},
		validJob(),
		&ListJobsRequest{Account: "phys", User: "ann", PageToken: "abc"},
		&ListTasksRequest{JobId: 1, PageToken: "abc"},
		&GetBalanceRequest{Account: "phys"},
		&ListJournalRequest{Account: "phys"},
		&UsageReportRequest{From: timestamppb.New(time.Unix(1, 0)), To: timestamppb.New(time.Unix(2, 0)), Account: "phys"},
		&AddPeerRequest{Id: "s4", RaftAddress: "10.0.0.4:7411"},
		&RemovePeerRequest{Id: "s4"},
		&UpdateSettingsRequest{Policy: s("hmrf"), Window: s("tumbling:24h"), Placement: s("spread"), LtrfResource: s("cpu"),
			AddResources: []string{"gpu"}, Fawkes: &FawkesSettingsUpdate{Weighting: s("td"), Disk: s("disk")}},
		&CreateLatencyQueueRequest{Account: "phys", Period: durationpb.New(time.Hour), Deadline: durationpb.New(time.Minute), Burst: map[string]float64{"cpu": 1}},
		&RemoveLatencyQueueRequest{Account: "phys"},
		&CreateUserRequest{Name: "ann", Accounts: []string{"phys"}},
		&GetUserRequest{Name: "ann"},
		&ListUsersRequest{Account: "phys", PageToken: "abc"},
		&MembershipRequest{User: "ann", Account: "phys"},
	}
}

// The characters that drive a terminal or disguise text, as the issue
// found them (NUL, ESC, newline) and their kin.
var terminalChars = []string{"\x00", "\x1b", "\n", "\r", "\x7f", "\u009b", "\u202e", "\u2066", "\xff"}

// Every string field of every request refuses every control character:
// each field of a valid request is set, in turn, to a value holding one,
// and Validate must refuse it. Commands may hold newlines and tabs (a
// shell script), nothing else.
func TestEveryStringFieldRefusesControlCharacters(t *testing.T) {
	for _, req := range validRequests() {
		if err := req.Validate(); err != nil {
			t.Fatalf("%T: the valid request is refused: %v", req, err)
		}
		m := req.(proto.Message)
		forEachStringSlot(m.ProtoReflect(), "", func(path string, set func(string)) {
			for _, c := range terminalChars {
				if c == "\n" && (strings.HasSuffix(path, "command") || strings.HasSuffix(path, "env")) {
					continue
				}
				r := proto.Clone(m)
				setAt(r.ProtoReflect(), path, "a"+c+"b")
				if err := r.(Validator).Validate(); err == nil {
					t.Errorf("%T.%s accepts %q", req, path, "a"+c+"b")
				}
			}
		})
	}
}

// forEachStringSlot calls fn with the path of every string field, repeated
// string element and string map key of m (and of its message fields).
func forEachStringSlot(m protoreflect.Message, prefix string, fn func(path string, set func(string))) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		path := prefix + string(fd.Name())
		switch {
		case fd.IsMap() && fd.MapKey().Kind() == protoreflect.StringKind:
			fn(path+"{key}", nil)
		case fd.Kind() == protoreflect.StringKind:
			fn(path, nil)
		case fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() && m.Has(fd):
			forEachStringSlot(m.Get(fd).Message(), path+".", fn)
		}
	}
}

// setAt puts v in the slot path names: a field, the first element of a
// repeated field (which gets one if it is empty), or a new map key with
// the value of an existing entry.
func setAt(m protoreflect.Message, path, v string) {
	name, rest, nested := strings.Cut(path, ".")
	key := strings.HasSuffix(name, "{key}")
	name = strings.TrimSuffix(name, "{key}")
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	switch {
	case nested:
		setAt(m.Mutable(fd).Message(), rest, v)
	case key:
		mp := m.Mutable(fd).Map()
		val := protoreflect.ValueOfFloat64(1)
		mp.Range(func(_ protoreflect.MapKey, x protoreflect.Value) bool { val = x; return false })
		mp.Set(protoreflect.ValueOfString(v).MapKey(), val)
	case fd.IsList():
		l := m.Mutable(fd).List()
		if l.Len() == 0 {
			l.Append(protoreflect.ValueOfString(v))
		} else {
			l.Set(l.Len()-1, protoreflect.ValueOfString(v))
		}
	default:
		m.Set(fd, protoreflect.ValueOfString(v))
	}
}

// Every request type with a string field is in validRequests, so a new
// field or request cannot skip the check above.
func TestValidRequestsCoverEveryRequestWithText(t *testing.T) {
	have := map[protoreflect.FullName]bool{}
	for _, r := range validRequests() {
		have[r.(proto.Message).ProtoReflect().Descriptor().FullName()] = true
	}
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		d := mt.Descriptor()
		if d.ParentFile().Package() != "longfair.v1" || !strings.HasSuffix(string(d.Name()), "Request") {
			return true
		}
		if _, ok := mt.New().Interface().(Validator); !ok {
			return true
		}
		text := false
		forEachStringSlot(mt.New(), "", func(string, func(string)) { text = true })
		if text && !have[d.FullName()] {
			t.Errorf("%s has string fields but no valid example in validRequests", d.FullName())
		}
		return true
	})
}

// Names report the character that breaks the rule, not a byte of it.
func TestNameErrorsNameTheCharacter(t *testing.T) {
	wantInvalid(t, (&CreateAccountRequest{Name: "más"}).Validate(), "'á' at character 2")
	wantInvalid(t, (&SubmitJobRequest{Account: "phys", User: "josé"}).Validate(), "'é' at character 4")
}

// A walltime under a second is refused: a task cannot start and report in
// less, and a nanosecond walltime is only a way to hold for free.
func TestWalltimeMinimum(t *testing.T) {
	for _, w := range []time.Duration{time.Nanosecond, 999 * time.Millisecond} {
		r := validJob()
		r.Walltime = durationpb.New(w)
		wantInvalid(t, r.Validate(), "walltime", "at least 1s")
	}
	r := validJob()
	r.Walltime = durationpb.New(time.Second)
	if err := r.Validate(); err != nil {
		t.Fatalf("a walltime of exactly %v is refused: %v", time.Second, err)
	}
}
