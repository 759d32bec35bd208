package core

import (
	"fmt"
	"time"
)

// The policy-setting rules that every layer applies the same way: the API
// checks a request with them, the FSM a log entry, and sched the settings
// it is given. Each takes the field's name as the caller's user knows it
// (qknobler_rho in a request, "qknobler knob ρ" in the engine), so the
// message names what the user set.

// CheckRho checks QKnobler's knob ρ: a value in [0, 1], where 0 favours
// efficiency and 1 is exactly DRF. NaN is out of range.
func CheckRho(field string, rho float64) error {
	if rho >= 0 && rho <= 1 {
		return nil
	}
	return fmt.Errorf("%s %v is out of range: give a value in [0, 1] (0 favours efficiency, 1 is exactly drf)", field, rho)
}

// CheckQuantum checks a scheduling quantum: how far ahead a pass projects
// usage, which must be positive.
func CheckQuantum(quantum time.Duration) error {
	if quantum > 0 {
		return nil
	}
	return fmt.Errorf("quantum %v must be positive, e.g. 1m", quantum)
}

// FawkesWeightings are the names of FAWKES's weightings (package
// sched/fawkes, which takes its list from here), in the order help shows
// them: the names a request may give, in any case.
func FawkesWeightings() []string {
	return []string{"td", "jd", "dd", "pu", "du", "ru", "js", "jt", "tt", "eq", "none"}
}
