package sim

import (
	"testing"

	"github.com/longfair/longfair/sched"
)

// RunChecked replays w under cfg with the driver's invariant checker
// (driver_test.go) on every event, for the tests of package sim_test that
// replay workloads built by sim/reproduce (package sim's own tests cannot
// import it: it imports sim).
func RunChecked(t *testing.T, w *Workload, cfg Config) *Result {
	t.Helper()
	c := newChecker(t, w, cfg.Settings.Policy)
	cfg.Trace = c.event
	res, err := Run(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.finish(res)
	return res
}

// SettingsFor is the settings the driver tests replay policy p with.
func SettingsFor(p sched.Policy) sched.Settings { return settingsFor(p) }
