package server

import (
	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/sched/fawkes"
)

// fawkesSettingsProto shows FAWKES weighting's settings with the defaults
// filled in.
func fawkesSettingsProto(c fawkes.Config) *longfairv1.FawkesSettings {
	c = c.WithDefaults()
	return &longfairv1.FawkesSettings{
		Weighting: string(c.Weighting), Interval: duration(c.Interval), Threshold: c.Threshold,
		Psi: c.Psi, Base: c.Base, Guarantee: c.Guarantee, Disk: c.Disk,
	}
}

// fawkesUpdate turns the request's FAWKES fields into the command's; nil
// when it sets none.
func fawkesUpdate(u *longfairv1.FawkesSettingsUpdate) *fsm.FawkesUpdate {
	if u == nil {
		return nil
	}
	out := &fsm.FawkesUpdate{
		Weighting: u.Weighting, Threshold: u.Threshold, Psi: u.Psi, Base: u.Base, Guarantee: u.Guarantee, Disk: u.Disk,
	}
	if u.Interval != nil {
		d := u.GetInterval().AsDuration()
		out.Interval = &d
	}
	return out
}
