package client

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// A submission without a request id goes out as a copy that carries one
// and every other field of the caller's; the caller's message keeps no id,
// so submitting it again is a second job, as the caller asked.
func TestIdempotencyKeyGoesOnACopy(t *testing.T) {
	req := JobSpec{Account: "phys", User: "ann", Name: "n", Demand: map[string]float64{"cpu": 2}, Tasks: 3,
		Walltime: time.Hour, Command: []string{"sh", "-c", "true"}, Env: []string{"A=1"}, EnvCaptured: true, Dir: "/tmp"}.Request()
	before := proto.Clone(req)
	out, ok := withIdempotencyKey(req).(*longfairv1.SubmitJobRequest)
	if !ok || out == req {
		t.Fatalf("withIdempotencyKey returned %T (the same message: %v), want a copy", out, out == req)
	}
	if !proto.Equal(req, before) {
		t.Fatalf("the caller's request changed: %v, was %v", req, before)
	}
	if len(out.GetRequestId()) != 24 {
		t.Fatalf("the copy's request id is %q, want 24 hex digits", out.GetRequestId())
	}
	out.RequestId = ""
	if !proto.Equal(out, before) {
		t.Fatalf("the copy differs from the request beyond its id:\n got %v\nwant %v", out, before)
	}
	// The copy does not share the caller's lists and maps.
	out.Command[0], out.Demand["cpu"] = "rm", 9
	if req.GetCommand()[0] != "sh" || req.GetDemand()["cpu"] != 2 {
		t.Fatalf("the copy shares the caller's command or demand: %v", req)
	}

	grant := &longfairv1.CreateGrantRequest{Account: "phys", AmountMicroSu: 5}
	if g := withIdempotencyKey(grant).(*longfairv1.CreateGrantRequest); g == grant || grant.GetId() != "" || g.GetAccount() != "phys" || g.GetAmountMicroSu() != 5 || len(g.GetId()) != len("grant-")+24 {
		t.Fatalf("grant: copy %v of %v", g, grant)
	}
	// A request with its own id goes as it is.
	req.RequestId = "mine"
	if withIdempotencyKey(req) != any(req) {
		t.Fatal("a request with an id was copied")
	}
}
