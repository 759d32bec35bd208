package longfairv1

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
)

// Request validation: every request type has a Validate method that checks
// what can be checked without the cluster state and returns a status error
// with code InvalidArgument whose message names the field and the fix.
// Servers run it before proposing anything (ValidateUnary does it for every
// call); checks that need the state (does the account exist? is there
// money?) happen when the command is applied.

// Validator is implemented by every request type.
type Validator interface {
	Validate() error
}

// ValidateUnary is a gRPC server interceptor that validates every request
// implementing Validator before its handler runs.
func ValidateUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if v, ok := req.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

// Limits of the API besides those in metadata.go.
const (
	// MinWalltime and MaxWalltime bound a job's walltime (core's rule).
	MinWalltime       = core.MinWalltime
	MaxWalltime       = core.MaxWalltime
	MaxPageTokenBytes = 256
	MaxNodeIDBytes    = core.MaxNodeIDLength
	MaxAddressBytes   = 255
	MaxDemandEntries  = 64
	MaxMemberships    = 1000
	// MaxQuantity bounds resource quantities, weights and contributions.
	MaxQuantity = ledger.MaxQuantity
	// MaxUsagePeriods bounds the periods of one usage report (split_at):
	// more than two years by day.
	MaxUsagePeriods = 1000
)

func bad(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, fmt.Sprintf(format, args...))
}

// checkName: 1–64 letters, digits, '.', '_' or '-', starting with a letter
// or digit (the cluster's rule for account, user, grant and resource names,
// core.CheckName).
func checkName(field, name string) error { return invalidIf(core.CheckName(field, name)) }

func checkOptionalName(field, name string) error {
	if name == "" {
		return nil
	}
	return checkName(field, name)
}

// checkText: one line of free text, at most limit bytes, with no control
// or bidirectional formatting characters (core.CheckText).
func checkText(field, s string, limit int) error {
	return invalidIf(core.CheckText(field, s, limit))
}

// invalidIf turns a core rule's error into an InvalidArgument status.
func invalidIf(err error) error {
	if err == nil {
		return nil
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

func checkQuantity(field string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > MaxQuantity {
		return bad("%s is %v: give a finite number from 0 to %g", field, x, MaxQuantity)
	}
	return nil
}

func checkQuantities(field string, q map[string]float64) error {
	if len(q) > MaxDemandEntries {
		return bad("%s names %d resources: at most %d", field, len(q), MaxDemandEntries)
	}
	for name, x := range q {
		if err := checkName(field+" resource name", name); err != nil {
			return err
		}
		if err := checkQuantity(field+"["+name+"]", x); err != nil {
			return err
		}
	}
	return nil
}

// checkDemand checks a task's demand: valid names and quantities, each
// either 0 or at least one unit of its resource (ledger.ResourceUnit: 0.01
// core, 1 MiB, one device), the rule the FSM applies again before it rounds
// the demand up to whole units.
func checkDemand(q map[string]float64) error {
	if err := checkQuantities("demand", q); err != nil {
		return err
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := ledger.ResourceUnit(name).RoundUp("demand["+name+"]", q[name]); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

func checkPage(size int32, token string) error {
	if size < 0 || size > MaxPageSize {
		return bad("page_size is %d: give 0 for the default (%d) or up to %d", size, DefaultPageSize, MaxPageSize)
	}
	if len(token) > MaxPageTokenBytes {
		return bad("page_token is %d bytes long: pass the next_page_token of the previous response unchanged", len(token))
	}
	if core.CheckText("page_token", token, MaxPageTokenBytes) != nil {
		return bad("page_token holds a character no page token has: pass the next_page_token of the previous response unchanged")
	}
	return nil
}

// StorableTime reports whether t is one of the times the cluster stores:
// nanoseconds since 1970 in an int64, so until 2262.
func StorableTime(t time.Time) bool {
	return !t.Before(time.Unix(0, 0)) && !t.After(time.Unix(0, math.MaxInt64))
}

func checkTimestamp(field string, ts *timestamppb.Timestamp) error {
	if ts == nil {
		return nil
	}
	if err := ts.CheckValid(); err != nil {
		return bad("%s is not a valid time (%v): give a time between years 1 and 9999", field, err)
	}
	if !StorableTime(ts.AsTime()) {
		return bad("%s %s is outside 1970–2262, the range the cluster stores", field, ts.AsTime().Format(time.RFC3339))
	}
	return nil
}

// checkWindow checks a range of time, each end optional: since ≤ until.
func checkWindow(since, until *timestamppb.Timestamp) error {
	if err := checkTimestamp("since", since); err != nil {
		return err
	}
	if err := checkTimestamp("until", until); err != nil {
		return err
	}
	if since != nil && until != nil && until.AsTime().Before(since.AsTime()) {
		return bad("until %s is before since %s: give since ≤ until", until.AsTime().Format(time.RFC3339Nano), since.AsTime().Format(time.RFC3339Nano))
	}
	return nil
}

func checkDuration(field string, d *durationpb.Duration, allowZero bool, limit time.Duration) error {
	if d == nil {
		if allowZero {
			return nil
		}
		return bad("%s is missing: give a positive duration", field)
	}
	if err := d.CheckValid(); err != nil {
		return bad("%s is not a valid duration (%v)", field, err)
	}
	v := d.AsDuration()
	if v < 0 || v == 0 && !allowZero {
		return bad("%s is %v: give a positive duration", field, v)
	}
	if limit > 0 && v > limit {
		return bad("%s is %v: at most %v", field, v, limit)
	}
	return nil
}
