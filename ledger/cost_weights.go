package ledger

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// costWeightUnit is the divisor of a per-unit suffix a billing weight may
// carry, for resources counted in bytes: "mem=0.25/GiB" is 0.25 SU per
// GiB-hour.
func costWeightUnit(unit string) (float64, bool) {
	switch unit {
	case "KiB":
		return 1 << 10, true
	case "MiB":
		return 1 << 20, true
	case "GiB":
		return 1 << 30, true
	case "TiB":
		return 1 << 40, true
	}
	return 0, false
}

// ParseBillingWeights reads the named form of billing weights, a
// comma-separated list of resource=weight such as "cpu=1,mem=0.25/GiB,mic=10",
// into BillingWeights indexed by resources (the cluster's resource list).
// A weight may end in /KiB, /MiB, /GiB or /TiB to price a byte-counted
// resource per that many bytes. Resources left out get weight 0. An empty
// string gives all-zero weights (nothing is billed).
func ParseBillingWeights(spec string, resources []string) (BillingWeights, error) {
	w := make(BillingWeights, len(resources))
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return w, nil
	}
	seen := make(map[string]bool)
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		name, value, ok := strings.Cut(item, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("billing weight %q: write resource=weight, e.g. cpu=1 or mem=0.25/GiB", item)
		}
		k := costResourceIndex(resources, name)
		if k < 0 {
			return nil, fmt.Errorf("billing weight for unknown resource %q: the cluster's resources are %s", name, strings.Join(resources, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("billing weight for %q is given twice: give each resource once", name)
		}
		seen[name] = true
		divisor := 1.0
		if num, unit, hasUnit := strings.Cut(value, "/"); hasUnit {
			d, known := costWeightUnit(strings.TrimSpace(unit))
			if !known {
				return nil, fmt.Errorf("billing weight %q: unknown unit %q; use /KiB, /MiB, /GiB or /TiB", item, unit)
			}
			value, divisor = strings.TrimSpace(num), d
		}
		x, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return nil, fmt.Errorf("billing weight %q: %q is not a finite non-negative number", item, value)
		}
		w[k] = x / divisor
	}
	return w, nil
}

// Format writes w in the named form ParseBillingWeights reads, leaving out
// zero weights. Weights are written with the shortest decimal that reads back
// to the same float64, so Format and ParseBillingWeights round-trip exactly.
// Positions beyond resources are written as #k so nothing is hidden.
func (w BillingWeights) Format(resources []string) string {
	var parts []string
	for k, x := range w {
		if x == 0 {
			continue
		}
		name := "#" + strconv.Itoa(k)
		if k < len(resources) {
			name = resources[k]
		}
		parts = append(parts, name+"="+strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func costResourceIndex(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}
