package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// updateSettings applies UpdateSettings; the result is a SettingsInfo.
func (b *batch) updateSettings(c *UpdateSettings, t ledger.Time) (any, error) {
	st := b.st
	s := st.settings
	s.Resources = slices.Clone(st.settings.Resources)
	s.BillingWeights = st.settings.BillingWeights.Clone()
	for _, r := range c.AddResources {
		if !slices.Contains(s.Resources, r) {
			// A resource nobody prices would be free to hold alone: its
			// weight is asked for with it (0 is an explicit choice).
			if _, priced := c.BillingWeights[r]; !priced {
				return nil, invalid("resource %q is added without a billing weight, so tasks could hold it for free: give it a weight in the same request (billing weights replace them all, so repeat the others), or %s=0 to make it free", r, r)
			}
			s.Resources = append(s.Resources, r)
		}
	}
	if len(s.Resources) > MaxResources {
		return nil, invalid("the cluster would have %d resources: at most %d are allowed", len(s.Resources), MaxResources)
	}
	n := len(s.Resources)
	s.BillingWeights = ledger.BillingWeights(pad(ledger.Vector(s.BillingWeights), n))
	if c.Policy != nil {
		s.Policy = sched.Policy(*c.Policy)
	}
	if c.Placement != nil {
		s.Placement = place.Strategy(*c.Placement)
	}
	if c.Quantum != nil {
		s.Quantum = *c.Quantum
	}
	if c.QKnoblerRho != nil {
		rho := *c.QKnoblerRho
		s.QKnoblerRho = &rho
	}
	if !c.Fawkes.empty() {
		s.Fawkes = c.Fawkes.applyTo(s.Fawkes)
	}
	if c.Timeout != nil {
		timeout := *c.Timeout
		s.Timeout = &timeout
	}
	window := st.window
	if c.Window != nil {
		w, err := ledger.ParseWindow(*c.Window)
		if err != nil {
			return nil, invalid("window: %v", err)
		}
		window, s.Window = w, w.String()
	}
	if c.LTRFResource != nil {
		if !slices.Contains(s.Resources, *c.LTRFResource) {
			return nil, invalid("ltrf resource %q is not a cluster resource: choose one of %s", *c.LTRFResource, strings.Join(s.Resources, ", "))
		}
		s.LTRFResource = *c.LTRFResource
	}
	if len(c.BillingWeights) > 0 {
		w := make(ledger.BillingWeights, n)
		for _, name := range sortedKeys(c.BillingWeights) {
			k := slices.Index(s.Resources, name)
			if k < 0 {
				return nil, invalid("billing weight for unknown resource %q: the cluster's resources are %s; add the resource first", name, strings.Join(s.Resources, ", "))
			}
			w[k] = c.BillingWeights[name]
		}
		s.BillingWeights = w
	}
	if c.BillingRule != nil {
		rule, err := ledger.ParseBillingRule(*c.BillingRule)
		if err != nil {
			return nil, invalid("%v", err)
		}
		s.BillingRule = rule
	}
	if err := schedSettings(&s, window).Validate(s.Resources); err != nil {
		return nil, invalid("settings: %v", err)
	}
	if err := putJSON(b.bucket(bucketSettings), keySettings, &s); err != nil {
		return nil, err
	}
	grown := n > len(st.settings.Resources)
	windowChanged := window != st.window
	st.settings, st.window = s, window
	if grown {
		if err := st.growResources(n); err != nil {
			return nil, err
		}
	}
	if windowChanged {
		if err := b.restartFairness(t); err != nil {
			return nil, err
		}
	}
	if grown || windowChanged {
		b.all = true
	}
	return st.settingsInfo(), nil
}

// schedSettings turns the stored settings into the policy engine's.
func schedSettings(s *settingsRecord, w ledger.Window) sched.Settings {
	timeout := w.DefaultTimeout()
	if s.Timeout != nil {
		timeout = *s.Timeout
	}
	return sched.Settings{
		Policy:       s.Policy,
		Quantum:      s.Quantum,
		Timeout:      timeout,
		Placement:    s.Placement,
		LTRFResource: max(slices.Index(s.Resources, s.LTRFResource), 0),
		QKnoblerRho:  s.qknoblerRho(),
		Fawkes:       s.Fawkes.config(),
	}
}

// growResources pads every in-memory vector to n resources after resources
// were added; stored records are padded when they are read.
func (s *state) growResources(n int) error {
	for _, nd := range s.nodes {
		nd.rec.Capacity, nd.free = pad(nd.rec.Capacity, n), pad(nd.free, n)
	}
	s.shapes = nil
	for _, j := range s.jobs {
		j.Demand = pad(j.Demand, n)
	}
	for _, a := range s.running {
		a.Demand = pad(a.Demand, n)
	}
	for name, r := range s.baseRates {
		s.baseRates[name] = pad(r, n)
	}
	fair, err := ledger.RestoreFairnessBook(padFairness(s.fair.State(), n))
	if err != nil {
		return fmt.Errorf("widen the fairness book to %d resources: %w", n, err)
	}
	s.fair = fair
	return nil
}

// restartFairness starts a new fairness book under the current window: the
// history of another window cannot be converted, so accumulated usage starts
// again from t, with the running tasks counted from t.
func (b *batch) restartFairness(t ledger.Time) error {
	s := b.st
	s.fair = ledger.NewFairnessBook(s.window, len(s.settings.Resources))
	clear(s.baseRates)
	for _, id := range sortedTaskIDs(s.running) {
		a := s.running[id]
		s.fair.TaskStarted(a.Account, a.Demand, t)
		a.CountedFrom = t
		if err := b.saveAttempt(a); err != nil {
			return err
		}
	}
	return nil
}

func sortedTaskIDs[V any](m map[taskID]V) []taskID {
	ids := make([]taskID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b taskID) int {
		if a.job != b.job {
			if a.job < b.job {
				return -1
			}
			return 1
		}
		switch {
		case a.task < b.task:
			return -1
		case a.task > b.task:
			return 1
		}
		return 0
	})
	return ids
}
