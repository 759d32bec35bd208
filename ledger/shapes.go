package ledger

import "strings"

// Shapes are the largest node shapes of a set of nodes: the distinct
// capacity vectors that no other node's capacity covers in every resource
// (the Pareto-maximal ones). A demand fits on some node of the set exactly
// when it fits one of these shapes, so checking a demand costs a few vector
// comparisons however many nodes there are: clusters have a few node
// classes, so a set of 10,000 nodes has a handful of largest shapes.
//
// Per-resource maxima would not do: with nodes of cpu=32 mic=0 and cpu=8
// mic=4, a task of cpu=16 mic=1 fits the maxima (32, 4) but no node.
//
// Shapes keeps the vectors it is given, not copies: they must not change
// while it is in use.
type Shapes []Vector

// Add returns s with capacity c taken into account: c is left out when a
// shape already covers it, and replaces the shapes it covers. The order of
// the shapes is the order their nodes were added in, so adding the same
// nodes in the same order gives the same Shapes on every replica.
func (s Shapes) Add(c Vector) Shapes {
	for _, m := range s {
		if covers(m, c) {
			return s
		}
	}
	kept := s[:0]
	for _, m := range s {
		if !covers(c, m) {
			kept = append(kept, m)
		}
	}
	clear(s[len(kept):]) // drop references to the shapes c replaced
	return append(kept, c)
}

// Holds reports whether some shape fits demand (Vector.Fits): whether one
// node of the set, idle, could run a task of this demand. No shape holds
// anything. A resource a shape has no entry for counts as 0.
func (s Shapes) Holds(demand Vector) bool {
	for _, m := range s {
		if fitsShape(m, demand) {
			return true
		}
	}
	return false
}

// fitsShape is Vector.Fits, with a resource m has no entry for counting as
// 0 instead of being out of range.
func fitsShape(m, demand Vector) bool {
	if len(demand) <= len(m) {
		return m.Fits(demand)
	}
	for _, d := range demand[len(m):] {
		if d > fitEpsilon {
			return false
		}
	}
	return m.Fits(demand[:len(m)])
}

// Most returns, for resource j, the largest quantity any shape has: what
// the biggest node has of j. It is 0 when there are no shapes.
func (s Shapes) Most(j int) float64 {
	most := 0.0
	for _, m := range s {
		if j < len(m) {
			most = max(most, m[j])
		}
	}
	return most
}

// Describe writes the shapes over the named resources for a message:
// "cpu=4 mem=16G mic=2", or "cpu=32 mem=128G, or cpu=8 mem=96G mic=4"
// when no one node is the largest in every resource; "none" when there
// are no shapes.
func (s Shapes) Describe(names []string) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, m := range s {
		parts[i] = FormatVector(names, m)
	}
	return strings.Join(parts, ", or ")
}

// Lacking says what of demand no shape holds, for a message that begins
// "no node has": the resources it asks more of than any shape has
// ("cpu=5", "mic=100 (none has any mic)"), or, when each resource alone
// fits some shape but no shape fits them all, the whole demand "on one
// node".
func (s Shapes) Lacking(names []string, demand Vector) string {
	var parts []string
	for j, d := range demand {
		if j >= len(names) {
			break
		}
		most := s.Most(j)
		if d <= most+fitEpsilon {
			continue
		}
		p := names[j] + "=" + FormatQuantity(names[j], d)
		if most == 0 {
			p += " (none has any " + names[j] + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return FormatVector(names, demand) + " on one node"
	}
	return strings.Join(parts, " and ")
}

// covers reports whether a ≥ b in every resource, exactly: Fits' tolerance
// is for demands, not for telling shapes apart. A missing entry counts as 0.
func covers(a, b Vector) bool {
	for j, x := range b {
		have := 0.0
		if j < len(a) {
			have = a[j]
		}
		if x > have {
			return false
		}
	}
	return true
}
