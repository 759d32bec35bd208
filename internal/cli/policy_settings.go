package cli

import (
	"flag"
	"strings"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// paperPolicyFlags are the 'longfair policy set' flags of the other
// papers' policies: qknobler's ρ and FAWKES weighting, named as in
// 'longfair sim'.
type paperPolicyFlags struct {
	rho, tau, psi, base, guarantee optionalFloat
	weighting, disk                optionalString
	interval                       optionalDuration
}

func (p *paperPolicyFlags) register(fs *flag.FlagSet) {
	fs.Var(&p.rho, "qknobler-rho", "qknobler's knob `ρ` in [0,1]: 1 is drf, 0 efficiency only")
	fs.Var(&p.weighting, "fawkes-weighting", "fawkes `weighting`: td, jd, dd, pu, du, ru, js, jt, tt, eq or none")
	fs.Var(&p.interval, "fawkes-interval", "fawkes: how often the weights are recomputed (`duration`)")
	fs.Var(&p.tau, "fawkes-tau", "fawkes: resize only when Var(D) exceeds `τ`, in (share·s)²; negative: at every interval")
	fs.Var(&p.guarantee, "fawkes-guarantee", "fawkes: minimum share of an account with work, as a `fraction` of its contribution share")
	fs.Var(&p.psi, "fawkes-psi", "fawkes ru: weight `ψ` of processor usage against disk usage, in (0,1]")
	fs.Var(&p.base, "fawkes-base", "fawkes jt, tt: the base `a` > 1 of a^(−completed/waiting)")
	fs.Var(&p.disk, "fawkes-disk", "fawkes du, ru: the `resource` to watch as disk")
}

// apply sets the request's fields for the flags given; it reports whether
// there were any.
func (p *paperPolicyFlags) apply(req *longfairv1.UpdateSettingsRequest) bool {
	req.QknoblerRho = p.rho.ptr()
	f := &longfairv1.FawkesSettingsUpdate{
		Weighting: p.weighting.ptr(), Threshold: p.tau.ptr(), Psi: p.psi.ptr(), Base: p.base.ptr(),
		Guarantee: p.guarantee.ptr(), Disk: p.disk.ptr(),
	}
	if p.interval.set {
		f.Interval = durationpb.New(p.interval.v)
	}
	if f.Weighting != nil || f.Interval != nil || f.Threshold != nil || f.Psi != nil || f.Base != nil || f.Guarantee != nil || f.Disk != nil {
		req.Fawkes = f
	}
	return req.QknoblerRho != nil || req.Fawkes != nil
}

// optionalString is a string flag that remembers whether it was given.
type optionalString struct {
	v   string
	set bool
}

func (o *optionalString) String() string { return o.v }

func (o *optionalString) Set(s string) error {
	o.v, o.set = s, true
	return nil
}

func (o *optionalString) ptr() *string {
	if !o.set {
		return nil
	}
	v := o.v
	return &v
}

// addPaperSettings adds the qknobler and FAWKES settings to the settings
// table.
func addPaperSettings(t *table, s *longfairv1.Settings) {
	t.add("qknobler_rho", fmtNumber(s.GetQknoblerRho()))
	f := s.GetFawkes()
	if f == nil {
		return
	}
	parts := []string{
		"weighting " + f.GetWeighting(), "interval " + fmtDuration(f.GetInterval()), "τ " + fmtNumber(f.GetThreshold()),
		"guarantee " + fmtNumber(f.GetGuarantee()),
	}
	switch f.GetWeighting() {
	case "ru":
		parts = append(parts, "ψ "+fmtNumber(f.GetPsi()))
	case "jt", "tt":
		parts = append(parts, "a "+fmtNumber(f.GetBase()))
	}
	if d := f.GetDisk(); d != "" {
		parts = append(parts, "disk "+d)
	}
	t.add("fawkes", strings.Join(parts, ", "))
}
