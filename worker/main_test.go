package worker

import (
	"os"
	"testing"
)

// The agents these tests run start each task's supervisor by running the
// test binary again.
func TestMain(m *testing.M) {
	Supervise()
	os.Exit(m.Run())
}
