package cli

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fetchEach returns every result in its place, never has more than
// fetchAhead calls in flight, stops at the first error and returns it.
func TestFetchEachKeepsOrderBoundsCallsAndStopsAtAnError(t *testing.T) {
	var inFlight, most atomic.Int32
	got, err := fetchEach(context.Background(), 100, func(_ context.Context, i int) (int, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Duration(100-i) * 20 * time.Microsecond) // later calls end sooner
		return i * i, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i*i {
			t.Fatalf("result %d is %d, want %d: results are not in their places", i, v, i*i)
		}
	}
	if m := most.Load(); m > fetchAhead || m < 2 {
		t.Errorf("%d calls were in flight at once, want 2 to %d", m, fetchAhead)
	}

	// The last call of the first batch fails while the others of it wait.
	failing := fetchAhead - 1
	bad := errors.New("job 8: not found")
	var calls atomic.Int32
	_, err = fetchEach(context.Background(), 1000, func(ctx context.Context, i int) (int, error) {
		calls.Add(1)
		if i == failing {
			return 0, bad
		}
		<-ctx.Done() // the others wait until the error cancels them
		return 0, ctx.Err()
	})
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the failing call's", err)
	}
	if n := calls.Load(); n > 2*fetchAhead {
		t.Errorf("%d of 1000 calls were made though one failed among the first %d, want at most %d", n, fetchAhead, 2*fetchAhead)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fetchEach(ctx, 5, func(context.Context, int) (int, error) { return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("with the context ended: err = %v, want it", err)
	}
}
