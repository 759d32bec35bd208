package client

import (
	"context"
	"testing"
	"time"
)

// TestAttemptDeadlineFollowsTheCallersTimeout checks the rule
// WithAttemptTimeout documents: the configured deadline, at most a third of
// what the caller's deadline leaves but never under the floor, doubled
// once the call has stalled on every server, and none when the caller's
// deadline comes first or per-attempt deadlines are off.
func TestAttemptDeadlineFollowsTheCallersTimeout(t *testing.T) {
	c, err := New([]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, WithAttemptTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	off, err := New([]string{"127.0.0.1:1"}, WithAttemptTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	near := func(got, want time.Duration) bool { return got <= want && got > want-want/10 }
	for _, tc := range []struct {
		name    string
		c       *Client
		overall time.Duration // 0: no deadline
		stalls  int
		bounded bool
		want    time.Duration
	}{
		{"long timeout", c, 30 * time.Second, 0, true, 2 * time.Second},
		{"no deadline", c, 0, 0, true, 2 * time.Second},
		{"short timeout: a third", c, 3 * time.Second, 0, true, time.Second},
		{"very short timeout: the floor", c, 600 * time.Millisecond, 0, true, MinAttemptTimeout},
		{"stalled on two of three servers", c, 30 * time.Second, 2, true, 2 * time.Second},
		{"stalled on every server", c, 30 * time.Second, 3, true, 4 * time.Second},
		{"stalled on every server twice", c, 30 * time.Second, 6, true, 8 * time.Second},
		{"doubling reaches the caller's deadline", c, 30 * time.Second, 12, true, 0},
		{"floor beyond the caller's deadline", c, 200 * time.Millisecond, 0, true, 0},
		{"turned off", off, 30 * time.Second, 0, true, 0},
		{"stream", c, 30 * time.Second, 0, false, 0},
	} {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if tc.overall > 0 {
			ctx, cancel = context.WithTimeout(ctx, tc.overall)
		}
		actx, acancel, limit := tc.c.attemptContext(ctx, tc.bounded, tc.stalls)
		if tc.want == 0 {
			if limit != 0 || actx != ctx {
				t.Errorf("%s: attempt deadline %v, want only the caller's", tc.name, limit)
			}
		} else if !near(limit, tc.want) {
			t.Errorf("%s: attempt deadline %v, want %v", tc.name, limit, tc.want)
		} else if dl, ok := actx.Deadline(); !ok || time.Until(dl) > limit {
			t.Errorf("%s: the attempt's context ends at %v, not within %v", tc.name, dl, limit)
		}
		acancel()
		cancel()
	}
}
