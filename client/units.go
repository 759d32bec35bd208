package client

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/longfair/longfair/ledger"
)

// MicroSUPerSU is how many micro-SU, the API's unit, make one service unit.
const MicroSUPerSU = 1_000_000

// ParseSU reads an amount of service units written in decimal ("1000",
// "12.5", "0.000001") into micro-SU, exactly: no binary rounding, and at
// most six decimals.
func ParseSU(s string) (int64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "SU"))
	t = strings.ReplaceAll(t, "_", "")
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("SU amount %q is not a decimal number such as 1000 or 12.5", s)
	}
	if len(frac) > 6 {
		return 0, fmt.Errorf("SU amount %q has more than six decimals: the smallest unit is 0.000001 SU", s)
	}
	frac += strings.Repeat("0", 6-len(frac))
	v, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok || !v.IsInt64() {
		return 0, fmt.Errorf("SU amount %q is too large", s)
	}
	if neg {
		return -v.Int64(), nil
	}
	return v.Int64(), nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// FormatSU writes micro-SU as service units with as many decimals as it
// needs: 12500000 is "12.5".
func FormatSU(micro int64) string {
	sign := ""
	u := uint64(micro)
	if micro < 0 {
		sign, u = "-", uint64(-(micro+1))+1
	}
	whole, frac := u/MicroSUPerSU, u%MicroSUPerSU
	if frac == 0 {
		return sign + strconv.FormatUint(whole, 10)
	}
	return sign + strconv.FormatUint(whole, 10) + "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
}

// Unit suffixes of quantities. K, M, G, T and P are binary (as in Slurm's
// --mem=4G, 4 GiB), and so are Ki … Pi with or without a trailing B; KB …
// PB are decimal.
var quantitySuffixes = []struct {
	suffix string
	factor float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"P", 1 << 50},
	{"B", 1},
}

// ParseQuantity reads a resource quantity: a number ("2", "0.5") with an
// optional unit suffix for sizes ("4G" is 4 GiB in bytes, "512M", "1.5T",
// "4GB" is 4·10⁹). It must be finite and not negative.
func ParseQuantity(s string) (float64, error) {
	t := strings.TrimSpace(s)
	factor := 1.0
	for _, u := range quantitySuffixes {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("quantity %q is not a number (with an optional size unit such as 4G or 512M)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("quantity %q is negative: resources are counted from 0", s)
	}
	if math.IsInf(v*factor, 0) {
		return 0, fmt.Errorf("quantity %q is too large to count: give a smaller number or unit", s)
	}
	return v * factor, nil
}

// ParseResources reads "name=quantity" pairs ("cpu=2", "mem=4G",
// "gpu=1"), comma-separated or one per element, into a demand map.
func ParseResources(items ...string) (map[string]float64, error) {
	out := make(map[string]float64)
	for _, item := range items {
		for _, kv := range strings.Split(item, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			name, val, ok := strings.Cut(kv, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				return nil, fmt.Errorf("resource %q is not name=quantity (for example cpu=2 or mem=4G)", kv)
			}
			q, err := ParseQuantity(val)
			if err != nil {
				return nil, fmt.Errorf("resource %s: %w", name, err)
			}
			out[name] = q
		}
	}
	return out, nil
}

// FormatQuantity writes a quantity of a resource for people: "mem" (and
// any resource whose name ends in "mem" or "bytes") as a binary size
// ("4G", "1.5T"), anything else as a short number. The servers word their
// messages with the same rule (ledger.FormatQuantity).
func FormatQuantity(resource string, v float64) string { return ledger.FormatQuantity(resource, v) }

// IsSizeResource reports whether a resource is counted in bytes: "mem"
// and any resource whose name ends in "mem" or "bytes" (the rule the
// cluster counts such resources in MiB by, ledger.IsSizeResource).
func IsSizeResource(name string) bool { return ledger.IsSizeResource(name) }

// FormatBytes writes a byte count with a binary unit: 4294967296 is "4G".
func FormatBytes(v float64) string { return ledger.FormatBytes(v) }
