package client

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// suReference converts with exact rational arithmetic: the amount times a
// million must be a whole number.
func suReference(s string) (int64, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(MicroSUPerSU, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func TestParseSUMatchesExactArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		whole := rng.Int64N(1 << 40)
		decimals := rng.IntN(7)
		s := fmt.Sprint(whole)
		if decimals > 0 {
			s += "." + fmt.Sprintf("%0*d", decimals, rng.Int64N(int64(math.Pow10(decimals))))
		}
		if rng.IntN(4) == 0 {
			s = "-" + s
		}
		want, ok := suReference(s)
		if !ok {
			t.Fatalf("reference cannot read %q", s)
		}
		got, err := ParseSU(s)
		if err != nil || got != want {
			t.Fatalf("ParseSU(%q) = %d, %v; want %d", s, got, err, want)
		}
		if back, err := ParseSU(FormatSU(got)); err != nil || back != got {
			t.Fatalf("FormatSU(%d) = %q reads back as %d, %v", got, FormatSU(got), back, err)
		}
	}
	for _, x := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64 + 1, 12_500_000} {
		if back, err := ParseSU(FormatSU(x)); err != nil || back != x {
			t.Errorf("FormatSU(%d) = %q reads back as %d, %v", x, FormatSU(x), back, err)
		}
	}
	if got := FormatSU(12_500_000); got != "12.5" {
		t.Errorf("FormatSU(12.5 SU) = %q", got)
	}
}

func TestParseSURefusesWhatIsNotAnAmount(t *testing.T) {
	for _, s := range []string{"", "-", ".", "1e3", "12.5.1", "0.0000001", "abc", "99999999999999999999", "1,5"} {
		if v, err := ParseSU(s); err == nil {
			t.Errorf("ParseSU(%q) = %d, want an error", s, v)
		}
	}
}

func TestParseQuantityUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"2", 2}, {"0.5", 0.5}, {"4G", 4 << 30}, {"4Gi", 4 << 30}, {"4GiB", 4 << 30}, {"4GB", 4e9},
		{"512M", 512 << 20}, {"1.5T", 1.5 * (1 << 40)}, {"100B", 100}, {" 3K ", 3 << 10},
	} {
		got, err := ParseQuantity(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "G", "-1", "NaN", "Inf", "4X", "4 G B", "1e300P"} {
		if v, err := ParseQuantity(bad); err == nil {
			t.Errorf("ParseQuantity(%q) = %v, want an error", bad, v)
		}
	}
}

func TestFormatQuantityReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		v := float64(rng.Int64N(1<<50)) * rng.Float64()
		s := FormatQuantity("mem", v)
		back, err := ParseQuantity(s)
		if err != nil {
			t.Fatalf("FormatQuantity(mem, %v) = %q does not read back: %v", v, s, err)
		}
		// Three decimals of the unit: the relative error is below 1e-3
		// once the value is at least one unit.
		if v >= 1 && math.Abs(back-v)/v > 1e-3 {
			t.Fatalf("FormatQuantity(mem, %v) = %q reads back as %v", v, s, back)
		}
	}
	if got := FormatQuantity("cpu", 2); got != "2" {
		t.Errorf("cpu 2 formats as %q", got)
	}
	if got := FormatQuantity("mem", 4<<30); got != "4G" {
		t.Errorf("4 GiB formats as %q", got)
	}
}

func TestParseResources(t *testing.T) {
	got, err := ParseResources("cpu=2,mem=4G", "gpu=1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["cpu"] != 2 || got["mem"] != 4<<30 || got["gpu"] != 1 {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"cpu", "=2", "cpu=x"} {
		if _, err := ParseResources(bad); err == nil {
			t.Errorf("ParseResources(%q) accepted", bad)
		}
	}
}

func TestParseAddresses(t *testing.T) {
	got, err := ParseAddresses(" 10.0.0.1:7410, host2 ,[::1]:9000,10.0.0.1:7410")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1:7410", "host2:7410", "[::1]:9000"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", " , ", "http://x/y"} {
		if _, err := ParseAddresses(bad); err == nil {
			t.Errorf("ParseAddresses(%q) accepted", bad)
		}
	}
}
