package fsm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
)

// UpdateSettings changes the cluster settings that are set (nil fields are
// left alone). BillingWeights, when not empty, replaces all billing weights
// (resources left out cost nothing). AddResources appends resource names to
// the cluster's resource list; resources are never removed or reordered,
// because every stored vector is indexed by that list.
type UpdateSettings struct {
	Policy         *string            `json:"policy,omitempty"`
	Window         *string            `json:"window,omitempty"`
	Timeout        *time.Duration     `json:"timeout,omitempty"`
	Placement      *string            `json:"placement,omitempty"`
	Backfill       *string            `json:"backfill,omitempty"`
	Quantum        *time.Duration     `json:"quantum,omitempty"`
	LTRFResource   *string            `json:"ltrf_resource,omitempty"`
	BillingWeights map[string]float64 `json:"billing_weights,omitempty"`
	// BillingRule is "max" or "sum" (ledger.ParseBillingRule).
	BillingRule  *string  `json:"billing_rule,omitempty"`
	AddResources []string `json:"add_resources,omitempty"`
	// QKnoblerRho is qknobler's knob ρ in [0, 1]; Fawkes changes FAWKES
	// weighting's settings (settings_policies.go).
	QKnoblerRho *float64      `json:"qknobler_rho,omitempty"`
	Fawkes      *FawkesUpdate `json:"fawkes,omitempty"`
}

func (*UpdateSettings) Type() CommandType { return TypeUpdateSettings }

func (c *UpdateSettings) validate(r rules) *Error {
	if c.Policy == nil && c.Window == nil && c.Timeout == nil && c.Placement == nil && c.Backfill == nil && c.Quantum == nil &&
		c.LTRFResource == nil && len(c.BillingWeights) == 0 && c.BillingRule == nil && len(c.AddResources) == 0 &&
		c.QKnoblerRho == nil && c.Fawkes.empty() {
		return invalid("nothing to update: set at least one setting")
	}
	if c.QKnoblerRho != nil {
		if err := invalidIf(core.CheckRho("qknobler knob ρ", *c.QKnoblerRho)); err != nil {
			return err
		}
	}
	if !c.Fawkes.empty() {
		if err := c.Fawkes.validate(r); err != nil {
			return err
		}
	}
	if c.Policy != nil {
		if _, err := sched.ParsePolicy(*c.Policy); err != nil {
			return invalid("policy: %v", err)
		}
	}
	if c.Window != nil {
		if _, err := ledger.ParseWindow(*c.Window); err != nil {
			return invalid("window: %v", err)
		}
	}
	if c.Placement != nil {
		if _, err := place.ParseStrategy(*c.Placement); err != nil {
			return invalid("placement: %v", err)
		}
	}
	if c.Backfill != nil {
		if _, err := sched.ParseBackfill(*c.Backfill); err != nil || *c.Backfill == "" {
			return invalid("backfill %q: want easy, conservative, none or greedy", *c.Backfill)
		}
	}
	if c.Timeout != nil && *c.Timeout < 0 {
		return invalid("time-out %v is negative: give 0 to disable it or a positive duration", *c.Timeout)
	}
	if c.Quantum != nil {
		if err := invalidIf(core.CheckQuantum(*c.Quantum)); err != nil {
			return err
		}
	}
	if c.LTRFResource != nil {
		if err := checkName("ltrf resource", *c.LTRFResource); err != nil {
			return err
		}
	}
	if err := checkQuantities("billing weight", c.BillingWeights); err != nil {
		return err
	}
	if c.BillingRule != nil {
		if _, err := ledger.ParseBillingRule(*c.BillingRule); err != nil {
			return invalid("%v", err)
		}
	}
	if len(c.AddResources) > MaxResources {
		return invalid("%d resources to add: a cluster has at most %d", len(c.AddResources), MaxResources)
	}
	return checkDistinctNames("resource", c.AddResources)
}

// settingsRecord is the cluster settings.
type settingsRecord struct {
	Resources []string       `json:"resources"`
	Policy    sched.Policy   `json:"policy"`
	Window    string         `json:"window"`
	Timeout   *time.Duration `json:"timeout,omitempty"` // nil: the window's default
	Placement place.Strategy `json:"placement"`
	// Backfill is "easy", "none" or "greedy"; a record written before backfill
	// existed has none set (""), which means easy: the default of every
	// cluster (schedSettings). Only the leader's passes read it, so the
	// state a log builds is the same whatever it means.
	Backfill string        `json:"backfill,omitempty"`
	Quantum  time.Duration `json:"quantum"`
	// LTRFResource names the resource ltrf is fair on.
	LTRFResource   string                `json:"ltrf_resource"`
	BillingWeights ledger.BillingWeights `json:"billing_weights"`
	// BillingRule is how the weighted resources make a task's rate. A
	// record written before rules existed has none, which reads as
	// BillingSum, the rule that cluster was billing under (loadState).
	BillingRule ledger.BillingRule `json:"billing_rule"`
	// QKnoblerRho is qknobler's ρ; nil means sched.DefaultQKnoblerRho.
	QKnoblerRho *float64 `json:"qknobler_rho,omitempty"`
	// Fawkes is FAWKES weighting's configuration; nil means its defaults.
	Fawkes *fawkesRecord `json:"fawkes,omitempty"`
}

// DefaultResources is the resource list of a new cluster.
var defaultResources = []string{"cpu", "mem", "mic"}

// defaultBillingWeights price a reference node of 16 cores, 64 GiB and 2
// MICs at 16 SU per hour whichever of its resources a task takes: 1 SU per
// core-hour, 0.25 SU per GiB-hour (Slurm's example TRESBillingWeights
// "CPU=1.0,Mem=0.25G"), 8 SU per MIC-hour. Under the default max rule a
// CPU-only task costs its cores, as it always did, and a memory-only or
// MIC-only task pays for the share of such a node it takes.
var defaultBillingWeights = ledger.BillingWeights{1, 0.25 / (1 << 30), 8}

// defaultSettings are a new cluster's settings: H-MRF with no window, a
// one-minute quantum, affinity placement, and billing by the largest
// weighted resource (defaultBillingWeights).
func defaultSettings() settingsRecord {
	d := sched.DefaultSettings()
	return settingsRecord{
		Resources:      append([]string(nil), defaultResources...),
		Policy:         d.Policy,
		Window:         ledger.Window{Kind: ledger.WindowNone}.String(),
		Placement:      d.Placement,
		Quantum:        d.Quantum,
		LTRFResource:   defaultResources[0],
		BillingWeights: defaultBillingWeights.Clone(),
		BillingRule:    ledger.BillingMax,
	}
}

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
	if c.Backfill != nil {
		s.Backfill = *c.Backfill
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
		Backfill:     s.backfill(),
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
		if nd.queued != nil {
			nd.queued = pad(nd.queued, n)
		}
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
		if a.State == TaskQueued {
			continue // counted once it starts
		}
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

// backfill is the backfill in force: easy unless set to none.
func (s *settingsRecord) backfill() sched.Backfill {
	if s.Backfill == "" {
		return sched.BackfillEASY
	}
	return sched.Backfill(s.Backfill)
}

// SettingsInfo is the cluster settings.
type SettingsInfo struct {
	Policy sched.Policy
	Window ledger.Window
	// Timeout is the starvation time-out in force; TimeoutIsDefault reports
	// that it is the window's default because none was set.
	Timeout          time.Duration
	TimeoutIsDefault bool
	Placement        place.Strategy
	Backfill         sched.Backfill
	Quantum          time.Duration
	LTRFResource     string
	// BillingWeights are SU per hour per unit of each resource.
	BillingWeights map[string]float64
	// BillingRule is how the weighted resources make a task's rate.
	BillingRule ledger.BillingRule
	// Resources is the cluster's resource list, in vector order.
	Resources []string
	// Sched is the same settings as the policy engine takes them.
	Sched sched.Settings
}

func (s *state) settingsInfo() SettingsInfo {
	ss := schedSettings(&s.settings, s.window)
	return SettingsInfo{
		Policy: s.settings.Policy, Window: s.window, Timeout: ss.Timeout, TimeoutIsDefault: s.settings.Timeout == nil,
		Placement: s.settings.Placement, Backfill: ss.Backfill, Quantum: s.settings.Quantum, LTRFResource: s.settings.LTRFResource,
		BillingWeights: s.named(ledger.Vector(s.settings.BillingWeights)), BillingRule: s.settings.BillingRule,
		Resources: slices.Clone(s.settings.Resources), Sched: ss,
	}
}

// Settings returns the cluster settings.
func (f *FSM) Settings() SettingsInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.settingsInfo()
}
