package longfairv1

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/longfair/longfair/core"
)

// Validate methods of the Groups and Queues requests and of the policy
// settings of the other papers (qknobler ρ, FAWKES weighting).

// MaxGroupDepth is how many names a group path may have.
const MaxGroupDepth = 8

// MaxQueuePeriod bounds a latency queue's period.
const MaxQueuePeriod = 365 * 24 * time.Hour

// checkGroupPath: 1–8 plain names separated by single slashes.
func checkGroupPath(field, path string) error {
	if path == "" {
		return bad("%s is empty: name the group, e.g. physics or physics/theory", field)
	}
	names := strings.Split(path, "/")
	if len(names) > MaxGroupDepth {
		return bad("%s %q has %d levels: a group path has at most %d", field, path, len(names), MaxGroupDepth)
	}
	for _, n := range names {
		if n == "" {
			return bad("%s %q has an empty name: separate names with single slashes and no slash at either end", field, path)
		}
		if err := checkName(field+" element", n); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the request.
func (r *SetGroupWeightRequest) Validate() error {
	if err := checkGroupPath("path", r.GetPath()); err != nil {
		return err
	}
	return checkQuantity("weight", r.GetWeight())
}

// Validate checks the request.
func (r *RemoveGroupRequest) Validate() error { return checkGroupPath("path", r.GetPath()) }

// Validate checks the request.
func (r *ListGroupsRequest) Validate() error { return nil }

// Validate checks the request.
func (r *SetAccountGroupRequest) Validate() error {
	if err := checkName("account", r.GetAccount()); err != nil {
		return err
	}
	if r.GetGroup() == "" {
		return nil
	}
	return checkGroupPath("group", r.GetGroup())
}

// Validate checks the request.
func (r *GetAccountTreeRequest) Validate() error { return nil }

// Validate checks the request.
func (r *CreateLatencyQueueRequest) Validate() error {
	if err := checkName("account", r.GetAccount()); err != nil {
		return err
	}
	if err := checkTimestamp("start", r.GetStart()); err != nil {
		return err
	}
	if err := checkDuration("period", r.GetPeriod(), false, MaxQueuePeriod); err != nil {
		return err
	}
	if err := checkDuration("deadline", r.GetDeadline(), false, 0); err != nil {
		return err
	}
	if d, p := r.GetDeadline().AsDuration(), r.GetPeriod().AsDuration(); d > p {
		return bad("deadline %v is longer than the period %v: a burst must be done before the next one arrives", d, p)
	}
	if len(r.GetBurst()) == 0 {
		return bad("burst is empty: give what a burst holds while it runs, e.g. cpu=64,mem=128G")
	}
	if err := checkQuantities("burst", r.GetBurst()); err != nil {
		return err
	}
	for _, x := range r.GetBurst() {
		if x > 0 {
			return nil
		}
	}
	return bad("burst is zero in every resource: give what a burst holds while it runs, e.g. cpu=64")
}

// Validate checks the request.
func (r *RemoveLatencyQueueRequest) Validate() error { return checkName("account", r.GetAccount()) }

// Validate checks the request.
func (r *ListLatencyQueuesRequest) Validate() error { return nil }

// validatePaperSettings checks the qknobler and FAWKES fields of an
// UpdateSettingsRequest: the ranges that need no cluster state. The
// server checks the rest (the disk resource exists, weighting none needs
// a guarantee) with the whole settings.
func (r *UpdateSettingsRequest) validatePaperSettings() error {
	if r.QknoblerRho != nil {
		if err := invalidIf(core.CheckRho("qknobler_rho", r.GetQknoblerRho())); err != nil {
			return err
		}
	}
	f := r.GetFawkes()
	if f == nil {
		return nil
	}
	if f.Weighting != nil && f.GetWeighting() != "" {
		names := core.FawkesWeightings()
		if !slices.Contains(names, strings.ToLower(f.GetWeighting())) {
			return bad("fawkes.weighting %q is unknown: give %s or %s", f.GetWeighting(), strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
		}
	}
	if err := checkDuration("fawkes.interval", f.GetInterval(), true, 0); err != nil {
		return err
	}
	if f.Threshold != nil && (math.IsNaN(f.GetThreshold()) || math.IsInf(f.GetThreshold(), 0)) {
		return bad("fawkes.threshold %v must be a finite number of (share·s)², e.g. 10 (negative: resize at every interval)", f.GetThreshold())
	}
	if f.Psi != nil && !(f.GetPsi() >= 0 && f.GetPsi() <= 1) {
		return bad("fawkes.psi %v is out of range: give a value in (0, 1] (0 means the default 0.5)", f.GetPsi())
	}
	if f.Base != nil && f.GetBase() != 0 && !(f.GetBase() > 1 && !math.IsInf(f.GetBase(), 0)) {
		return bad("fawkes.base %v is out of range: give a finite value above 1, e.g. 2 (0 means the default)", f.GetBase())
	}
	if f.Guarantee != nil && !(f.GetGuarantee() >= 0 && f.GetGuarantee() <= 1) {
		return bad("fawkes.guarantee %v is out of range: give the fraction of its contribution share an account with work keeps, in [0, 1]", f.GetGuarantee())
	}
	if f.Disk != nil && f.GetDisk() != "" {
		return checkName("fawkes.disk", f.GetDisk())
	}
	return nil
}

// hasPaperSettings reports whether the request sets a qknobler or FAWKES
// field.
func (r *UpdateSettingsRequest) hasPaperSettings() bool {
	f := r.GetFawkes()
	return r.QknoblerRho != nil || f != nil && (f.Weighting != nil || f.Interval != nil || f.Threshold != nil ||
		f.Psi != nil || f.Base != nil || f.Guarantee != nil || f.Disk != nil)
}
