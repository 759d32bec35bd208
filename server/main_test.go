package server

import (
	"os"
	"testing"

	"github.com/longfair/longfair/worker"
)

// The worker agents these tests run start each task's supervisor by
// running the test binary again.
func TestMain(m *testing.M) {
	worker.Supervise()
	os.Exit(m.Run())
}
