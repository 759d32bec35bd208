package longfairv1

import (
	"math"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

func validQueue() *CreateLatencyQueueRequest {
	return &CreateLatencyQueueRequest{
		Account: "phys", Period: durationpb.New(10 * time.Minute), Deadline: durationpb.New(time.Minute),
		Burst: map[string]float64{"cpu": 8},
	}
}

func TestGroupAndQueueValidation(t *testing.T) {
	for _, ok := range []Validator{
		&SetGroupWeightRequest{Path: "science/physics", Weight: 2},
		&SetAccountGroupRequest{Account: "phys"},
		&SetAccountGroupRequest{Account: "phys", Group: "science"},
		validQueue(),
		&UpdateSettingsRequest{QknoblerRho: proto.Float64(0)},
		&UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Weighting: proto.String("TD"), Threshold: proto.Float64(-1)}},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%T %v refused: %v", ok, ok, err)
		}
	}
	queue := func(change func(*CreateLatencyQueueRequest)) *CreateLatencyQueueRequest {
		q := validQueue()
		change(q)
		return q
	}
	cases := []struct {
		name  string
		req   Validator
		words []string
	}{
		{"empty path", &SetGroupWeightRequest{}, []string{"path", "empty"}},
		{"trailing slash", &SetGroupWeightRequest{Path: "a/"}, []string{"path", "empty name"}},
		{"deep path", &SetGroupWeightRequest{Path: "a/b/c/d/e/f/g/h/i"}, []string{"at most 8"}},
		{"odd name", &RemoveGroupRequest{Path: "a/b c"}, []string{"' '"}},
		{"NaN weight", &SetGroupWeightRequest{Path: "a", Weight: math.NaN()}, []string{"weight", "finite"}},
		{"no account", &SetAccountGroupRequest{Group: "a"}, []string{"account", "empty"}},
		{"no period", queue(func(q *CreateLatencyQueueRequest) { q.Period = nil }), []string{"period", "missing"}},
		{"long deadline", queue(func(q *CreateLatencyQueueRequest) { q.Deadline = durationpb.New(time.Hour) }), []string{"deadline", "period"}},
		{"no burst", queue(func(q *CreateLatencyQueueRequest) { q.Burst = nil }), []string{"burst", "empty"}},
		{"zero burst", queue(func(q *CreateLatencyQueueRequest) { q.Burst = map[string]float64{"cpu": 0} }), []string{"burst", "zero"}},
		{"ρ", &UpdateSettingsRequest{QknoblerRho: proto.Float64(1.5)}, []string{"qknobler_rho", "[0, 1]"}},
		{"weighting", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Weighting: proto.String("fifo")}}, []string{"fawkes.weighting", "td"}},
		{"guarantee", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Guarantee: proto.Float64(2)}}, []string{"fawkes.guarantee", "[0, 1]"}},
		{"base", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Base: proto.Float64(0.5)}}, []string{"fawkes.base", "above 1"}},
		{"psi", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Psi: proto.Float64(-1)}}, []string{"fawkes.psi"}},
		{"interval", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Interval: durationpb.New(-time.Second)}}, []string{"fawkes.interval"}},
		{"empty fawkes", &UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{}}, []string{"nothing to update"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantInvalid(t, c.req.Validate(), c.words...) })
	}
}

// The messages of the policy-setting rules that live in core read as they
// did when the API kept its own copies.
func TestPolicySettingMessagesUnchanged(t *testing.T) {
	for _, c := range []struct {
		req  *UpdateSettingsRequest
		want string
	}{
		{&UpdateSettingsRequest{QknoblerRho: proto.Float64(1.5)}, "qknobler_rho 1.5 is out of range: give a value in [0, 1] (0 favours efficiency, 1 is exactly drf)"},
		{&UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Weighting: proto.String("fifo")}}, `fawkes.weighting "fifo" is unknown: give td, jd, dd, pu, du, ru, js, jt, tt, eq or none`},
	} {
		if err := c.req.Validate(); status.Convert(err).Message() != c.want {
			t.Errorf("%v: %v, want %q", c.req, err, c.want)
		}
	}
	if err := (&UpdateSettingsRequest{Fawkes: &FawkesSettingsUpdate{Weighting: proto.String("TD")}}).Validate(); err != nil {
		t.Errorf("weighting TD (any case): %v", err)
	}
}
