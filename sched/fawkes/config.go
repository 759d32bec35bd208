package fawkes

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/longfair/longfair/core"
)

// Weighting names how FAWKES sets the accounts' weights (paper §4.3).
type Weighting string

// The weighting policies: the paper's two baselines, then its demand-,
// usage- and performance-based policies.
const (
	None  Weighting = "none" // every active account keeps its minimum share, nothing more
	Equal Weighting = "eq"   // the cluster divided equally among the active accounts
	JD    Weighting = "jd"   // job demand: jobs waiting
	DD    Weighting = "dd"   // data demand: declared work of the waiting tasks
	TD    Weighting = "td"   // task demand: tasks waiting
	PU    Weighting = "pu"   // processor usage: share of the partition's processors in use
	DU    Weighting = "du"   // disk usage: share of the partition's disk (else memory) in use
	RU    Weighting = "ru"   // resource usage: ψ·PU + (1−ψ)·DU
	JS    Weighting = "js"   // job slowdown of the waiting jobs
	JT    Weighting = "jt"   // job throughput: a^(−jobs completed / jobs waiting)
	TT    Weighting = "tt"   // task throughput: a^(−tasks completed / tasks waiting)
)

// Weightings lists every weighting, in the order help shows them: the
// names core.FawkesWeightings gives, which the API checks requests by.
func Weightings() []Weighting {
	names := core.FawkesWeightings()
	w := make([]Weighting, len(names))
	for i, n := range names {
		w[i] = Weighting(n)
	}
	return w
}

// ParseWeighting turns a name (any case) into a Weighting, or says which
// names are valid.
func ParseWeighting(name string) (Weighting, error) {
	w := Weighting(strings.ToLower(name))
	if slices.Contains(Weightings(), w) {
		return w, nil
	}
	names := make([]string, 0, len(Weightings()))
	for _, x := range Weightings() {
		names = append(names, string(x))
	}
	return "", fmt.Errorf("unknown fawkes weighting %q: valid weightings are %s", name, strings.Join(names, ", "))
}

// Defaults of the paper's experiments.
const (
	// DefaultInterval is T, how often the weights are recomputed (§7.3
	// uses 120 s).
	DefaultInterval = 2 * time.Minute
	// DefaultThreshold is τ (§5.3 sets it to 10), in (share·s)².
	DefaultThreshold = 10.0
	// DefaultPsi is RU's ψ (§7.3 uses 0.5).
	DefaultPsi = 0.5
	// DefaultBase is JT's and TT's a (§4.3.3 sets it to 2).
	DefaultBase = 2.0
)

// Config is FAWKES's part of the policy settings. The zero Config means
// TD weighting every two minutes with the paper's τ, ψ and a, and no
// minimum shares.
type Config struct {
	// Weighting is the policy that sets the weights; empty means TD.
	Weighting Weighting
	// Interval is T, how often the weights are recomputed; zero means
	// DefaultInterval.
	Interval time.Duration
	// Threshold is τ: the partitions are resized to the new weights only
	// when the global discrimination Var(D) over the last interval exceeds
	// it. D_i is in share·seconds (a fraction of the cluster held for a
	// time), so with T = 120 s, τ = 10 means an imbalance of about
	// √10/120 ≈ 2.6% of the cluster. Zero means DefaultThreshold; a
	// negative value resizes at every interval.
	Threshold float64
	// Psi is RU's ψ in (0, 1], the weight of processor usage against disk
	// usage; zero means DefaultPsi.
	Psi float64
	// Base is JT's and TT's a > 1; zero means DefaultBase.
	Base float64
	// Guarantee is the minimum share of an active account, as a fraction
	// of its contribution share w_i/Σw: FAWKES's core nodes, which the
	// account keeps while it has work whatever its weight. In [0, 1].
	Guarantee float64
	// Disk names the resource DU watches; empty means disk when the
	// cluster has it, else mem, else the last resource.
	Disk string
}

// WithDefaults returns the config with every zero field replaced by its
// default.
func (c Config) WithDefaults() Config {
	if c.Weighting == "" {
		c.Weighting = TD
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Psi == 0 {
		c.Psi = DefaultPsi
	}
	if c.Base == 0 {
		c.Base = DefaultBase
	}
	return c
}

// Validate checks the config against the cluster's resources and says what
// to change when it is wrong.
func (c Config) Validate(resources []string) error {
	if c.Weighting != "" {
		w, err := ParseWeighting(string(c.Weighting))
		if err != nil {
			return err
		}
		// Weights and Shares compare names exactly: "TD" would weigh
		// nothing and act as neither td nor a baseline.
		if w != c.Weighting {
			return fmt.Errorf("fawkes weighting %q must be written in lower case, as ParseWeighting returns it: %q", c.Weighting, w)
		}
	}
	if c.Interval < 0 {
		return fmt.Errorf("fawkes interval %v must be positive, e.g. 2m (0 means the default %v)", c.Interval, DefaultInterval)
	}
	if math.IsNaN(c.Threshold) || math.IsInf(c.Threshold, 0) {
		return fmt.Errorf("fawkes threshold τ %v must be a finite number of (share·s)², e.g. %v", c.Threshold, DefaultThreshold)
	}
	if !(c.Psi >= 0 && c.Psi <= 1) {
		return fmt.Errorf("fawkes ψ %v is out of range: give a value in (0, 1] (0 means the default %v)", c.Psi, DefaultPsi)
	}
	if c.Base != 0 && !(c.Base > 1 && !math.IsInf(c.Base, 0)) {
		return fmt.Errorf("fawkes throughput base a %v is out of range: give a finite value above 1, e.g. %v", c.Base, DefaultBase)
	}
	if !(c.Guarantee >= 0 && c.Guarantee <= 1) {
		return fmt.Errorf("fawkes guarantee %v is out of range: give the fraction of its contribution share an active account keeps, in [0, 1]", c.Guarantee)
	}
	if c.Weighting == None && c.Guarantee == 0 {
		return fmt.Errorf("fawkes weighting none keeps every account at its minimum share, and the guarantee is 0: no account could run; set a guarantee above 0 or choose another weighting")
	}
	if c.Disk != "" && !slices.Contains(resources, c.Disk) {
		return fmt.Errorf("fawkes disk resource %q is not one of the cluster's resources %v", c.Disk, resources)
	}
	return nil
}

// DiskResource is the index of the resource DU watches.
func (c Config) DiskResource(resources []string) int {
	for _, name := range []string{c.Disk, "disk", "mem"} {
		if i := slices.Index(resources, name); name != "" && i >= 0 {
			return i
		}
	}
	return len(resources) - 1
}

// ProcessorResource is the index of the resource PU watches: cpu when the
// cluster has it, else the first resource.
func ProcessorResource(resources []string) int {
	if i := slices.Index(resources, "cpu"); i >= 0 {
		return i
	}
	return 0
}
