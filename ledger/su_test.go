package ledger

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseSU(t *testing.T) {
	cases := []struct {
		in   string
		want SU
	}{
		{"12.5", 12_500_000},
		{"12", 12_000_000},
		{"0", 0},
		{"-0", 0},
		{"0.000001", 1},
		{".25", 250_000},
		{"+3.1", 3_100_000},
		{"-3.100000", -3_100_000},
		{"  7.75 ", 7_750_000},
		{"9223372036854.775807", math.MaxInt64},
		{"-9223372036854.775808", math.MinInt64},
		{"000012.500", 12_500_000},
	}
	for _, c := range cases {
		got, err := ParseSU(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSU(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseSURefusesWithReason(t *testing.T) {
	cases := []struct{ in, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{"-", "no digits"},
		{".", "no digits"},
		{"12.", "nothing after the decimal point"},
		{"1.0000001", "more than 6 decimal places"},
		{"1e6", "only digits"},
		{"1,000", "only digits"},
		{"1.2.3", "only digits"},
		{"12 SU", "only digits"},
		{"--1", "only digits"},
		{"9223372036854.775808", "out of range"},
		{"-9223372036854.775809", "out of range"},
		{"99999999999999999999999", "out of range"},
	}
	for _, c := range cases {
		_, err := ParseSU(c.in)
		if !errors.Is(err, ErrBadSU) {
			t.Errorf("ParseSU(%q): error %v does not wrap ErrBadSU", c.in, err)
			continue
		}
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("ParseSU(%q) = %q; want the reason %q", c.in, err, c.reason)
		}
	}
}

func TestSUString(t *testing.T) {
	cases := map[SU]string{
		12_500_000:    "12.5",
		3_000_000:     "3",
		0:             "0",
		1:             "0.000001",
		-1:            "-0.000001",
		-2_250_000:    "-2.25",
		math.MaxInt64: "9223372036854.775807",
		math.MinInt64: "-9223372036854.775808",
	}
	for in, want := range cases {
		if got := in.String(); got != want {
			t.Errorf("SU(%d).String() = %q, want %q", int64(in), got, want)
		}
	}
}

// TestSUStringMatchesExactDecimal checks String against an independent
// formatting through math/big, and that ParseSU reads it back, over random
// amounts of every magnitude.
func TestSUStringMatchesExactDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		v := SU(rng.Int64() >> rng.IntN(64))
		if rng.IntN(2) == 0 {
			v = -v
		}
		want := new(big.Rat).SetFrac(big.NewInt(int64(v)), big.NewInt(1_000_000)).FloatString(6)
		if strings.Contains(want, ".") {
			want = strings.TrimRight(strings.TrimRight(want, "0"), ".")
		}
		if want == "-0" {
			want = "0"
		}
		if got := v.String(); got != want {
			t.Fatalf("SU(%d).String() = %q, want %q", int64(v), got, want)
		}
		back, err := ParseSU(v.String())
		if err != nil || back != v {
			t.Fatalf("ParseSU(%q) = %d, %v; want %d", v.String(), back, err, int64(v))
		}
	}
}

func FuzzParseSU(f *testing.F) {
	for _, s := range []string{"12.5", "-0.000001", ".5", "9223372036854.775807", "1e3", "", "+", "1.", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSU(s)
		if err != nil {
			if !errors.Is(err, ErrBadSU) {
				t.Fatalf("ParseSU(%q): error %v does not wrap ErrBadSU", s, err)
			}
			return
		}
		back, err := ParseSU(v.String())
		if err != nil || back != v {
			t.Fatalf("ParseSU(%q) = %d, but its String %q reads back as %d, %v", s, int64(v), v.String(), back, err)
		}
	})
}
