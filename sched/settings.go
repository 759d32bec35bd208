package sched

import (
	"fmt"
	"time"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/sched/place"
)

// DefaultQuantum is the live system's scheduling quantum: how far ahead a pass
// projects usage and the non-sharing baseline when it judges fairness.
const DefaultQuantum = time.Minute

// DefaultSettings are the settings of a new cluster: H-MRF, a one-minute
// quantum, affinity placement and no starvation time-out (with no window there
// is no window length to default it to).
func DefaultSettings() Settings {
	return Settings{Policy: HMRF, Quantum: DefaultQuantum, Placement: place.Affinity}
}

// Validate checks the settings against the cluster's resource list and says
// what to change when they are wrong.
func (s Settings) Validate(resources []string) error {
	if _, err := ParsePolicy(string(s.Policy)); err != nil {
		return err
	}
	if _, err := place.ParseStrategy(string(s.Placement)); err != nil {
		return err
	}
	if err := core.CheckQuantum(s.Quantum); err != nil {
		return err
	}
	if s.Timeout < 0 {
		return fmt.Errorf("time-out %v must not be negative (0 disables it)", s.Timeout)
	}
	if _, err := ParseBackfill(string(s.Backfill)); err != nil {
		return err
	}
	if s.Reservations < 0 {
		return fmt.Errorf("reservations %d must not be negative (0 is the default, %d)", s.Reservations, DefaultReservations)
	}
	// Every policy's own settings, in table order: a stored value is
	// checked even when its policy is not in force.
	for _, r := range policyTable() {
		if r.settings == nil {
			continue
		}
		if err := r.settings(&s, resources, r.name == s.Policy); err != nil {
			return err
		}
	}
	return nil
}
