package ledger

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unit is the smallest amount of a resource the cluster places, bills and
// shows: Num/Den of the resource's quantity. Every demand is a whole number
// of units and every node offers a whole number of them, so a node's free
// vector, which is capacity minus whole units, can be kept exact
// (AddUnits) and nothing is ever placed, freed or billed in amounts that
// round away.
//
// The units follow the resource's name (ResourceUnit) rather than a
// setting, so the API, the FSM and the CLI apply the same rule with no
// state: cpu in hundredths of a core (Slurm places whole cores; hundredths
// keep fractional-core arrays possible while a task still holds at least
// 1/100 of a core), byte-counted resources (mem, and names ending in mem or
// bytes) in MiB as Slurm counts memory, and everything else — mic, gpu and
// any device or licence an admin adds — in whole units.
type Unit struct {
	Num, Den float64 // a unit is Num/Den of the quantity; both whole and positive
	// Name is how people read a unit of the resource: "0.01 core", "1 MiB".
	Name string
}

// IsSizeResource reports whether a resource is counted in bytes: "mem"
// and any resource whose name ends in "mem" or "bytes".
func IsSizeResource(name string) bool {
	return name == "mem" || strings.HasSuffix(name, "mem") || strings.HasSuffix(name, "bytes")
}

// ResourceUnit is the unit of the named resource.
func ResourceUnit(name string) Unit {
	switch {
	case name == "cpu":
		return Unit{Num: 1, Den: 100, Name: "0.01 core"}
	case IsSizeResource(name):
		return Unit{Num: 1 << 20, Den: 1, Name: "1 MiB (1048576 bytes)"}
	}
	return Unit{Num: 1, Den: 1, Name: "1 (a whole device or item)"}
}

// UnitsOf returns the units of a resource list, indexed like its vectors.
func UnitsOf(resources []string) []Unit {
	u := make([]Unit, len(resources))
	for k, name := range resources {
		u[k] = ResourceUnit(name)
	}
	return u
}

// unitSlack is how far from a whole number of units a quantity may be and
// still count as that number: the residue of decimal input ("0.07" is not
// exactly 7/100 in binary) and of float sums, far below any unit.
const unitSlack = 1e-9

// count is x in units, unrounded. Dividing or multiplying by 1 is exact,
// so skipping it changes no result, only the time. The float64
// conversions round each product (Go may not fuse it into the division),
// so every architecture computes the same bits: replicas must agree.
func (u Unit) count(x float64) float64 {
	if u.Num == 1 {
		return float64(x * u.Den)
	}
	return float64(x*u.Den) / u.Num
}

// of is n units as a quantity, computed the same way whatever n came from,
// so equal counts give bit-identical quantities.
func (u Unit) of(n float64) float64 {
	if u.Den == 1 {
		return float64(n * u.Num)
	}
	return float64(n*u.Num) / u.Den
}

// whole returns the whole number of units c is within unitSlack of.
func whole(c float64) (float64, bool) {
	r := math.Round(c)
	return r, math.Abs(c-r) <= unitSlack*math.Max(1, r)
}

// up returns the whole number of units c is within unitSlack of, else c
// rounded up; exact says which.
func up(c float64) (n float64, exact bool) {
	if n, ok := whole(c); ok {
		return n, true
	}
	return math.Ceil(c), false
}

// RoundUp returns demand x as a whole number of units, rounding up (as
// Slurm rounds memory up to MiB): the quantity the cluster then places,
// frees, bills and shows. It refuses, naming field, a quantity that is not
// finite, negative, above MaxQuantity, or not zero but less than one unit
// (such a demand is a mistake — 4 bytes of memory for 4G, 1e-6 of a core —
// and would hold next to nothing while it runs).
func (u Unit) RoundUp(field string, x float64) (float64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > MaxQuantity {
		return 0, fmt.Errorf("%s is %v: give a finite number from 0 to %g, in units of %s", field, x, MaxQuantity, u.Name)
	}
	if x == 0 {
		return 0, nil
	}
	c := u.count(x)
	n, exact := up(c)
	if n < 1 || !exact && c < 1 {
		return 0, fmt.Errorf("%s is %v, less than one unit of %s: ask for 0 or at least %s", field, x, u.Name, strconv.FormatFloat(u.of(1), 'f', -1, 64))
	}
	return u.of(n), nil
}

// Floor returns capacity x as the whole number of units a node can offer,
// rounding down: a node with 15.7 GiB offers 16076 MiB. Quantities that are
// not finite and non-negative give 0.
func (u Unit) Floor(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	c := u.count(x)
	n, ok := whole(c)
	if !ok {
		n = math.Floor(c)
	}
	return u.of(n)
}

// AddUnits adds sign × demand (sign is +1 or -1) to a free vector in whole
// units: each component is counted in units (the free amount to the
// nearest unit, the demand rounded up), added as whole numbers, which is
// exact, and written back as that number of units. So a free vector never
// drifts: a node's free resources are the same bits whatever order tasks
// started and ended in, on every replica, and a hundred 0.01-core tasks
// fill a 1-core node exactly. A demand that is not whole units (one stored
// before units existed) moves its rounded-up amount both ways, so it cannot
// drift either. Components beyond units are added as they are.
func AddUnits(free, demand Vector, units []Unit, sign float64) {
	for k := range free {
		if k >= len(units) {
			free[k] += sign * demand[k]
			continue
		}
		if demand[k] == 0 {
			continue // most tasks ask for few of the resources
		}
		u := units[k]
		n, _ := up(u.count(demand[k]))
		free[k] = u.of(math.Round(u.count(free[k])) + sign*n)
	}
}

// MaxQuantity bounds every resource quantity, weight and contribution. An
// exabyte of memory fits; a value large enough to overflow accumulated
// usage (resource-seconds over years of a million-task array) does not.
const MaxQuantity = 1e18
