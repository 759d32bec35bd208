package ledger

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SU is an amount of service units counted in micro-SU: 1 SU = 1,000,000.
// Balances are integers so that adding and subtracting the same charges
// always lands on the same number, on every replica.
type SU int64

// MicroPerSU is how many micro-SU make one SU.
const MicroPerSU SU = 1_000_000

// MaxSU is the largest amount an SU can hold (about 9.2 trillion SU).
const MaxSU SU = math.MaxInt64

// suDecimals is the number of decimal places an SU amount can have.
const suDecimals = 6

// String formats s in SU with up to six decimals and no trailing zeros:
// 12500000 → "12.5", 3000000 → "3", -1 → "-0.000001".
func (s SU) String() string {
	neg := s < 0
	// Work in uint64 so that the most negative value has a magnitude.
	mag := uint64(s)
	if neg {
		mag = -mag
	}
	whole := mag / uint64(MicroPerSU)
	frac := mag % uint64(MicroPerSU)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(strconv.FormatUint(whole, 10))
	if frac != 0 {
		digits := fmt.Sprintf("%06d", frac)
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(digits, "0"))
	}
	return b.String()
}

// ErrBadSU is wrapped by every ParseSU error.
var ErrBadSU = errors.New("invalid SU amount")

// ParseSU reads a decimal SU amount such as "12.5", "-3", "0.000001" or
// ".25" into micro-SU. At most six decimal places are accepted, because the
// book counts in micro-SU and silently rounding money would hide a mistake.
// Surrounding spaces are ignored; exponents, thousands separators and units
// are not accepted.
func ParseSU(text string) (SU, error) {
	s := strings.TrimSpace(text)
	bad := func(why string) (SU, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrBadSU, text, why)
	}
	if s == "" {
		return bad("empty; write an amount such as 12.5")
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return bad("no digits; write an amount such as 12.5")
	}
	if hasDot && frac == "" {
		return bad("nothing after the decimal point; write 12 or 12.5")
	}
	if !suAllDigits(whole) || !suAllDigits(frac) {
		return bad("only digits and one decimal point are allowed, e.g. 12.5")
	}
	if len(frac) > suDecimals {
		return bad("more than 6 decimal places; SU are counted in micro-SU (0.000001)")
	}
	// The magnitude is accumulated in uint64 so that the most negative SU
	// ("-9223372036854.775808") parses too.
	var mag uint64
	for _, c := range whole + frac + strings.Repeat("0", suDecimals-len(frac)) {
		d := uint64(c - '0')
		if mag > (math.MaxUint64-d)/10 {
			return bad(suOutOfRange)
		}
		mag = mag*10 + d
	}
	if neg {
		if mag > uint64(math.MaxInt64)+1 {
			return bad(suOutOfRange)
		}
		return SU(-mag), nil
	}
	if mag > uint64(math.MaxInt64) {
		return bad(suOutOfRange)
	}
	return SU(mag), nil
}

const suOutOfRange = "out of range; amounts must lie within ±9223372036854.775807 SU"

func suAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// suAdd returns a+b, or false when the sum does not fit in an SU.
func suAdd(a, b SU) (SU, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}
