package ledger

import (
	"math"
	"strconv"
	"strings"
)

// FormatQuantity writes a quantity of a resource for people: "mem" (and
// any resource whose name ends in "mem" or "bytes") as a binary size
// ("4G", "1.5T", as Slurm's --mem reads them), anything else as a short
// number. The CLI prints quantities and the servers word their refusals
// with this one rule.
func FormatQuantity(resource string, v float64) string {
	if IsSizeResource(resource) {
		return FormatBytes(v)
	}
	return formatNumber(v)
}

// FormatBytes writes a byte count with a binary unit: 4294967296 is "4G".
func FormatBytes(v float64) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return formatNumber(v) + units[i]
}

// formatNumber writes v with at most three significant decimals and no
// trailing zeros.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "0" || s == "-0" {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return s
}

// FormatVector writes v over the named resources as "cpu=4 mem=16G mic=2",
// leaving out zeros; "nothing" when every entry is zero.
func FormatVector(names []string, v Vector) string {
	var b strings.Builder
	for j, x := range v {
		if x == 0 || j >= len(names) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(names[j] + "=" + FormatQuantity(names[j], x))
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}
