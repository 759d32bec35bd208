package worker

import (
	"os"
	"testing"
	"time"
)

// The agents these tests run start each task's supervisor by running the
// test binary again; the containment tests run it as a known workload
// (envTestWorkload).
func TestMain(m *testing.M) {
	Supervise()
	switch os.Getenv(envTestWorkload) {
	case "busy2s":
		// 2 s of this process's CPU time, however busy the machine is.
		start := processTime()
		for processTime()-start < 2*time.Second {
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// envTestWorkload makes the test binary a task's workload.
const envTestWorkload = "LONGFAIR_TEST_WORKLOAD"
