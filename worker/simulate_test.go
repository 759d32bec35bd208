package worker

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// A simulated attempt runs for what its command sleeps, within its
// walltime, and ends at once for anything else.
func TestSimulatedRuntime(t *testing.T) {
	for _, c := range []struct {
		command  []string
		walltime time.Duration
		want     time.Duration
	}{
		{[]string{"sleep 2.5"}, time.Minute, 2500 * time.Millisecond},
		{[]string{"sleep", "30"}, 10 * time.Second, 10 * time.Second},
		{[]string{"true"}, time.Minute, 0},
		{[]string{"sleep x"}, time.Minute, 0},
		{[]string{"sleep -1"}, time.Minute, 0},
		{[]string{"sleep 1; rm -rf /"}, time.Minute, 0},
	} {
		asg := &longfairv1.Assignment{Command: c.command, Walltime: durationpb.New(c.walltime)}
		if got := simulatedRuntime(asg); got != c.want {
			t.Errorf("%q within %v runs %v, want %v", c.command, c.walltime, got, c.want)
		}
	}
}
