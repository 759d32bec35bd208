package fsm

import (
	"math"
	"time"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
)

// The settings of the other papers' policies: qknobler's knob ρ and FAWKES
// weighting. Both live in the settings record; an UpdateSettings sets the
// fields it names and leaves the rest.

// qknoblerRho is the ρ in force.
func (s *settingsRecord) qknoblerRho() float64 {
	if s.QKnoblerRho == nil {
		return sched.DefaultQKnoblerRho
	}
	return *s.QKnoblerRho
}

// fawkesRecord is FAWKES weighting's part of the settings record, as
// fawkes.Config: zero fields mean their defaults.
type fawkesRecord struct {
	Weighting fawkes.Weighting `json:"weighting,omitempty"`
	Interval  time.Duration    `json:"interval,omitempty"`
	Threshold float64          `json:"threshold,omitempty"`
	Psi       float64          `json:"psi,omitempty"`
	Base      float64          `json:"base,omitempty"`
	Guarantee float64          `json:"guarantee,omitempty"`
	Disk      string           `json:"disk,omitempty"`
}

// config is the weighting's configuration; a nil record is all defaults.
func (r *fawkesRecord) config() fawkes.Config {
	if r == nil {
		return fawkes.Config{}
	}
	return fawkes.Config{
		Weighting: r.Weighting, Interval: r.Interval, Threshold: r.Threshold,
		Psi: r.Psi, Base: r.Base, Guarantee: r.Guarantee, Disk: r.Disk,
	}
}

// FawkesUpdate changes the FAWKES weighting settings that are set (nil
// fields are left alone). Zero values mean the defaults, as in
// fawkes.Config: a zero Threshold is τ = 10, a negative one resizes at
// every interval.
type FawkesUpdate struct {
	Weighting *string        `json:"weighting,omitempty"`
	Interval  *time.Duration `json:"interval,omitempty"`
	Threshold *float64       `json:"threshold,omitempty"`
	Psi       *float64       `json:"psi,omitempty"`
	Base      *float64       `json:"base,omitempty"`
	Guarantee *float64       `json:"guarantee,omitempty"`
	Disk      *string        `json:"disk,omitempty"`
}

// empty reports whether the update sets nothing.
func (u *FawkesUpdate) empty() bool {
	return u == nil || u.Weighting == nil && u.Interval == nil && u.Threshold == nil && u.Psi == nil &&
		u.Base == nil && u.Guarantee == nil && u.Disk == nil
}

// validate checks what can be checked without the cluster's resources;
// the ranges are checked with the rest of the settings at apply.
func (u *FawkesUpdate) validate(r rules) *Error {
	if u.Weighting != nil && *u.Weighting != "" {
		if _, err := fawkes.ParseWeighting(*u.Weighting); err != nil {
			return invalid("%v", err)
		}
	}
	if u.Interval != nil && *u.Interval < 0 {
		return invalid("fawkes interval %v must be positive, e.g. 2m (0 means the default %v)", *u.Interval, fawkes.DefaultInterval)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"fawkes threshold τ", u.Threshold}, {"fawkes ψ", u.Psi}, {"fawkes base a", u.Base}, {"fawkes guarantee", u.Guarantee}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return invalid("%s is %v: give a finite number", f.name, *f.v)
		}
	}
	if u.Disk != nil && *u.Disk != "" {
		return checkName("fawkes disk resource", *u.Disk)
	}
	return nil
}

// applyTo returns a new record: old with the update's fields set. old is
// not changed, so a refused update leaves the settings as they were.
func (u *FawkesUpdate) applyTo(old *fawkesRecord) *fawkesRecord {
	r := fawkesRecord{}
	if old != nil {
		r = *old
	}
	if u.Weighting != nil {
		w, _ := fawkes.ParseWeighting(*u.Weighting)
		r.Weighting = w // "" (the default) when empty
	}
	if u.Interval != nil {
		r.Interval = *u.Interval
	}
	if u.Threshold != nil {
		r.Threshold = *u.Threshold
	}
	if u.Psi != nil {
		r.Psi = *u.Psi
	}
	if u.Base != nil {
		r.Base = *u.Base
	}
	if u.Guarantee != nil {
		r.Guarantee = *u.Guarantee
	}
	if u.Disk != nil {
		r.Disk = *u.Disk
	}
	return &r
}
