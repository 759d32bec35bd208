package cli

import (
	"os"
	"testing"

	"github.com/longfair/longfair/worker"
)

func TestMain(m *testing.M) {
	worker.Supervise() // tests run worker agents in this process
	os.Exit(m.Run())
}
